import CohortCrypto
import CohortCore
import CohortDeid
import CohortStore
public import Foundation

/// The link from one export recipient's pseudonyms back to study codes, with the day offset the
/// participant's dates were shifted by (the same for every recipient): what a coordinator needs to re-import cohort's own FHIR
/// export (`data import --from fhir --recipient R` derives it on the fly; a fresh workspace
/// reads it from the CSV ``write(workspace:recipient:to:)`` makes, via `--user-map`).
///
/// It re-identifies the recipient's data: the file is written mode 0600 and belongs with the
/// keys, never with the export.
public enum PseudonymMap {
    /// One participant as `recipient` sees them.
    public struct Entry: Sendable, Equatable {
        /// The pseudonym the recipient's files use.
        public var pseudonym: String
        /// The participant's study code.
        public var code: String
        /// Days the participant's dates were moved by (for every recipient) (≤ 0; 0 when the policy does not shift record times).
        public var shiftDays: Int
        /// The participant's IANA time zone.
        public var timeZone: String
    }

    /// Every participant on the roster, as `recipient` sees them.
    public static func entries(workspace: Workspace, recipient: String) throws -> [Entry] {
        let p = try workspace.currentProtocol().studyProtocol
        let key = try workspace.keystore.recipientKey(for: recipient)
        let pseudonymizer = Pseudonymizer(recipientKey: key)
        let shifter = try DateShifter(key: try workspace.keystore.dateShiftKey(), policy: p.deidentification.dateShift)
        let shifts = p.deidentification.rule(table: "records", field: "start")?.transform == .shift
        return try workspace.store.participants().map { s in
            Entry(
                pseudonym: pseudonymizer.pseudonym(for: s.participant.id), code: s.participant.code,
                shiftDays: shifts ? shifter.offset(for: s.participant.id) : 0, timeZone: s.participant.timeZone)
        }
    }

    /// Writes `user_id,participant,shift_days` (user_id = the pseudonym) to `url`, mode 0600;
    /// returns the number of participants.
    @discardableResult
    public static func write(workspace: Workspace, recipient: String, to url: URL) throws -> Int {
        let rows = try entries(workspace: workspace, recipient: recipient)
        var text = "user_id,participant,shift_days\n"
        for e in rows { text += [e.pseudonym, e.code, String(e.shiftDays)].map(CSVText.field).joined(separator: ",") + "\n" }
        guard FileManager.default.createFile(atPath: url.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CohortError(.system, "cannot write the pseudonym map", at: .init(file: url.path), hint: "check the folder exists and is writable")
        }
        return rows.count
    }
}
