import CohortCore
import CohortPackage

extension ExportManifest.ConsentBasis {
    /// The consent facts of `studyProtocol` for an export to `audience`, with the records consent
    /// left out (`data type: reason` → count).
    init(studyProtocol: StudyProtocol, audience: ExportAudience, recordExclusions: [String: Int]) {
        let policy = studyProtocol.consent
        let collected = studyProtocol.dataTypes.keys.sorted()
        var scopes: [String: [String]] = [:]
        for (scope, audiences) in policy.allSharingScopes { scopes[scope.rawValue] = audiences.sorted().map(\.rawValue) }
        self.init(
            audience: audience.rawValue, scopes: scopes,
            versions: policy.documents.map { document in
                .init(
                    version: document.version, accepted: document.accepted, covers: collected.filter { document.covers($0) }.map(\.rawValue),
                    retroactive: document.retroactive)
            },
            recordsLeftOut: recordExclusions.keys.sorted().map { .init(reason: $0, count: recordExclusions[$0] ?? 0) })
    }
}
