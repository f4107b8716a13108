import CohortCore
public import CohortDeid
import CohortStore
import Foundation
import CohortCrypto

/// `cohort deid preview`: before/after for one participant and a sample of their records.
public enum DeidPreviewService {
    /// The participant with study code `code` and up to `sample` of their records (plus up to two with notes) before and after
    /// de-identification for `recipient`. Throws `CohortError` `.notFound` when no participant has the code, and the
    /// store's or keystore's errors.
    public static func preview(workspace: Workspace, code: String, recipient: String, sample: Int) throws -> [DeidentificationPreviewRow] {
        let p = try workspace.currentProtocol().studyProtocol
        guard let stored = try workspace.store.participant(code: code, withIdentity: true) else {
            throw CohortError(.notFound, "no enrolled participant has study code \(code)")
        }
        let roster = try workspace.store.participants(withIdentities: true).map(\.participant)
        let deid = try Deidentifier(
            studyProtocol: p, recipient: recipient, recipientKey: try workspace.keystore.recipientKey(for: recipient),
            shiftKey: try workspace.keystore.dateShiftKey(), roster: roster,
            referenceDate: CivilDate(workspace.now(), in: TimeZone(identifier: "UTC") ?? .current))
        var records: [Record] = []
        var withNotes: [Record] = []
        try workspace.store.forEachRecord(stored.handle, participantID: stored.participant.id) { r in
            if records.count < sample { records.append(r) }
            if r.note != nil, withNotes.count < 2 { withNotes.append(r) }
        }
        return deid.preview(stored.participant, records: records + withNotes.filter { !records.contains($0) })
    }
}
