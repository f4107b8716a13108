import CohortCore
import CohortDeid
import CohortPackage
import CohortStore

extension ExportJob {
    /// Makes the export's participant rows k-anonymous under `policy` (nothing when it asks for
    /// no k): generalizes and suppresses in `rows`, and leaves out of `included` and `rows` the
    /// participants suppressed entirely (their consents and records go with them), counting them
    /// in `exclusions`. Returns what was achieved, for the report and the manifest.
    static func applyKAnonymity(
        policy: DeidentificationPolicy, included: inout [StoredParticipant], rows: inout [DeidentifiedParticipant],
        exclusions: inout [String: Int]
    ) throws -> KAnonymitySummary? {
        guard let anonymizer = try KAnonymizer(policy: policy) else { return nil }
        let result = anonymizer.apply(rows)
        let kept = Dictionary(result.participants.map { ($0.pseudonym, $0) }, uniquingKeysWith: { a, _ in a })
        var keptParticipants: [StoredParticipant] = []
        var keptRows: [DeidentifiedParticipant] = []
        for (stored, row) in zip(included, rows) {
            if let adjusted = kept[row.pseudonym], !result.suppressedPseudonyms.contains(row.pseudonym) {
                keptParticipants.append(stored)
                keptRows.append(adjusted)
            } else {
                exclusions["suppressed for k-anonymity", default: 0] += 1
            }
        }
        included = keptParticipants
        rows = keptRows
        return result.summary
    }
}

extension ExportManifest.KAnonymity {
    /// The manifest's statement of a k-anonymity summary (sensitive fields as `table.column`).
    init(_ summary: KAnonymitySummary) {
        self.init(
            requestedK: summary.requestedK, achievedK: summary.achievedK, quasiIdentifiers: summary.quasiIdentifiers,
            classes: summary.classes, generalized: summary.generalized, suppressedValues: summary.suppressedValues,
            suppressedParticipants: summary.suppressedParticipants, sensitive: summary.sensitive?.map { "\($0.table).\($0.column)" })
    }
}
