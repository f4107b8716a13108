import CohortCore
public import Foundation

/// A reminder to send one participant: the rendered message and what a coordinator needs to
/// mail-merge it (name and contact, decrypted from the roster).
///
/// It carries identifiers on purpose and only goes where a reminder is meant to go (the screen,
/// `--out` files, the `--mail-merge` file, all mode 0600): it is never logged or audited.
public struct ReminderMessage: Sendable, Hashable {
    /// Study code (`P-0007`).
    public var code: String
    /// The participant's name as enrolled.
    public var name: String
    /// Email address, if enrolled with one.
    public var email: String?
    /// Phone number, if enrolled with one.
    public var phone: String?
    /// Postal address, if enrolled with one.
    public var address: String?
    /// The protocol's reminder template, rendered for the participant.
    public var text: String

    /// Creates a reminder message.
    public init(code: String, name: String, email: String?, phone: String?, address: String?, text: String) {
        self.code = code
        self.name = name
        self.email = email
        self.phone = phone
        self.address = address
        self.text = text
    }

    /// The mail-merge CSV header.
    public static let mailMergeHeader = ["code", "name", "email", "phone", "address", "message"]

    /// The reminders as one RFC 4180 CSV (CRLF, quoted where needed) for a mail merge: one row per
    /// participant, absent contacts empty.
    public static func mailMergeCSV(_ reminders: [ReminderMessage]) -> String {
        var text = mailMergeHeader.joined(separator: ",") + "\r\n"
        for r in reminders {
            let cells = [r.code, r.name, r.email ?? "", r.phone ?? "", r.address ?? "", r.text]
            text += cells.map(CSVText.field).joined(separator: ",") + "\r\n"
        }
        return text
    }
}

extension ReminderMessage {
    /// Writes ``mailMergeCSV(_:)`` to `url`, readable by its owner only (it holds names and
    /// contacts); an existing file is replaced.
    public static func writeMailMerge(_ reminders: [ReminderMessage], to url: URL) throws {
        let data = Data(mailMergeCSV(reminders).utf8)
        try? FileManager.default.removeItem(at: url)
        guard FileManager.default.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CohortError(.system, "cannot write the mail-merge file", at: .init(file: url.path), hint: "check that its folder exists and is writable")
        }
    }
}
