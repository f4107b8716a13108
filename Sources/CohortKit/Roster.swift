public import CohortCore
import CohortCrypto
import CohortStore
public import Foundation
import CohortIO
import CohortImport

/// A participant enrolled: their study code and the one-time withdrawal token, shown once.
public struct EnrolledParticipant: Sendable, Codable {
    /// The study code assigned (or given in the roster).
    public var code: String
    /// The participant's internal id.
    public var id: UUID
    /// Printed once at enrollment; only a salted hash is stored.
    public var withdrawalToken: String

    enum CodingKeys: String, CodingKey {
        case code, id
        case withdrawalToken = "withdrawal_token"
    }
}

/// Enrollment and the roster import.
public struct Roster: Sendable {
    /// The workspace participants are enrolled into.
    public let workspace: Workspace

    /// Enrollment into `workspace`.
    public init(workspace: Workspace) { self.workspace = workspace }

    static let knownTimeZones = Set(TimeZone.knownTimeZoneIdentifiers)

    /// An IANA zone name (`Region/City`, or `UTC`) that the system's tz database resolves. Foundation's
    /// list of known names lags renames (it has Asia/Calcutta, not Asia/Kolkata), so resolution decides.
    static func isIANAZone(_ name: String) -> Bool {
        if name == "UTC" { return true }
        guard name.contains("/"), !name.hasPrefix("GMT"), !name.hasPrefix("Etc/GMT"), TimeZone(identifier: name) != nil else { return false }
        return true
    }

    /// Validates an entry: the first problem is thrown (see ``validate(_:file:line:problems:)`` for all of them).
    func validate(_ e: RosterEntry, file: String?, line: Int?) throws -> (Participant, ParticipantIdentity) {
        var problems: [CohortError] = []
        guard let valid = validate(e, file: file, line: line, problems: &problems) else {
            throw problems.first ?? CohortError.invalid("the roster entry is not valid", file: file, line: line)
        }
        return valid
    }

    /// Validates an entry, adding every problem of it to `problems` (each names the field and
    /// what was expected, never the value), so one pass over a roster lists them all. Nil when any.
    func validate(_ e: RosterEntry, file: String?, line: Int?, problems: inout [CohortError]) -> (Participant, ParticipantIdentity)? {
        var check = RosterEntryCheck(file: file, line: line)
        let code = e.code.trimmingCharacters(in: .whitespaces)
        if code.range(of: #"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$"#, options: .regularExpression) == nil {
            check.bad("code", "expected a study code of letters, digits, '-' or '_' (at most 32), e.g. P-0001")
        }
        let name = e.name.trimmingCharacters(in: .whitespaces)
        if name.isEmpty { check.bad("name", "a name is required") }
        for field in Self.fieldsWithControlCharacters(e) {
            check.bad(field, "expected text without control characters (a NUL byte, tab or line break inside the field)", hint: "fix the field in the roster file")
        }
        let tzName = e.timeZone.trimmingCharacters(in: .whitespaces)
        if !Self.isIANAZone(tzName) {
            check.bad("time_zone", "expected an IANA time zone such as Europe/Berlin or America/New_York",
                hint: Suggest.closest(to: tzName, in: Array(Self.knownTimeZones)).map { "did you mean \($0)?" })
        }
        let (enrolled, birth) = check.dates(e, today: CivilDate(workspace.now(), in: TimeZone(identifier: "UTC") ?? .current))
        let sex = check.sex(e.sex ?? "")
        let (email, phone, zip) = check.contacts(e)
        let site = check.site(e.site)
        problems += check.problems
        guard check.problems.isEmpty, let enrolled, let sex else { return nil }
        let participant = Participant(id: UUID(), code: code, sex: sex, timeZone: tzName, enrolledOn: enrolled, site: site)
        let identity = ParticipantIdentity(
            name: name, email: email, phone: phone, birthDate: birth, address: RosterEntryCheck.optional(e.address), zip: zip,
            mrn: RosterEntryCheck.optional(e.mrn), devices: e.devices.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        return (participant, identity)
    }

    /// The roster fields holding a control character (U+0000–U+001F, U+007F–U+009F): never
    /// part of a name, address or MRN, and printed raw they would corrupt a terminal or a table.
    static func fieldsWithControlCharacters(_ e: RosterEntry) -> [String] {
        let fields: [(String, String?)] = [
            ("code", e.code), ("name", e.name), ("email", e.email), ("phone", e.phone), ("birth_date", e.birthDate), ("sex", e.sex),
            ("address", e.address), ("zip", e.zip), ("mrn", e.mrn), ("time_zone", e.timeZone), ("enrolled_on", e.enrolledOn),
            ("devices", e.devices.joined(separator: ";")), ("site", e.site),
        ]
        return fields.compactMap { field, value in
            (value ?? "").unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) } ? field : nil
        }
    }

    /// Makes a withdrawal token (128 random bits, base32 in groups of four) and its salted hash.
    static func makeToken() throws -> (token: String, salt: [UInt8], hash: [UInt8]) {
        let raw = Base32.encode(try SecureRandom.bytes(16))
        var groups: [String] = []
        var current = ""
        for ch in raw {
            current.append(ch)
            if current.count == 4 {
                groups.append(current)
                current = ""
            }
        }
        if !current.isEmpty { groups.append(current) }
        let token = groups.joined(separator: "-")
        let salt = try SecureRandom.bytes(16)
        return (token, salt, tokenHash(token, salt: salt))
    }

    /// SHA-256(salt ‖ normalized token): tokens are compared case- and dash-insensitively.
    static func tokenHash(_ token: String, salt: [UInt8]) -> [UInt8] {
        let normalized = token.uppercased().filter { $0.isLetter || $0.isNumber }
        return SHA256.hash(salt + Array(normalized.utf8))
    }

    /// At most this many problems of one roster are listed (the count of all is given).
    public static let maximumReportedProblems = 50

    /// Enrolls the entries in one transaction; returns each participant's one-time token.
    ///
    /// All or nothing: every entry is checked first, and when any is wrong nothing is stored and
    /// the error lists every problem (file, line, field — never a value), up to
    /// ``maximumReportedProblems``, so a coordinator fixes the whole file in one pass.
    public func enroll(_ entries: [(RosterEntry, line: Int?)], file: String?, source: String) throws -> [EnrolledParticipant] {
        try enroll(entries, file: file, source: source, problems: [])
    }

    /// `enroll`, with the problems a reader already found (lines it could not read as entries).
    func enroll(_ entries: [(RosterEntry, line: Int?)], file: String?, source: String, problems earlier: [CohortError]) throws
        -> [EnrolledParticipant]
    {
        var seen: [String: Int] = [:]
        var enrollments: [Enrollment] = []
        var result: [EnrolledParticipant] = []
        var problems = earlier
        let existing = Set(try workspace.store.participants().map(\.participant.code))
        for (entry, line) in entries {
            guard let (participant, identity) = validate(entry, file: file, line: line, problems: &problems) else { continue }
            if let first = seen[participant.code] {
                problems.append(
                    CohortError.invalid("study code \(participant.code) appears twice in this file (first on line \(first))", file: file, line: line, field: "code"))
                continue
            }
            if existing.contains(participant.code) {
                problems.append(
                    CohortError(.conflict, "participant \(participant.code) is already enrolled", at: .init(file: file, line: line, field: "code"),
                        hint: "remove the line, or use another study code"))
                continue
            }
            seen[participant.code] = line ?? 0
            let (token, salt, hash) = try Self.makeToken()
            enrollments.append(Enrollment(participant: participant, identity: identity, tokenSalt: salt, tokenHash: hash))
            result.append(EnrolledParticipant(code: participant.code, id: participant.id, withdrawalToken: token))
        }
        // By line; a line's problems stay in field order (stable sort).
        problems = problems.enumerated().sorted { a, b in
            (a.element.location?.line ?? 0, a.offset) < (b.element.location?.line ?? 0, b.offset)
        }.map(\.element)
        if let first = problems.first {
            guard problems.count > 1 else { throw first }
            let listed = problems.prefix(Self.maximumReportedProblems).map { problem in
                "  " + [problem.location?.description, problem.message].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
            }
            let more = problems.count > Self.maximumReportedProblems ? ["  … and \(problems.count - Self.maximumReportedProblems) more"] : []
            throw CohortError(
                first.code, "\(problems.count) problems in the roster; nothing was enrolled:\n" + (listed + more).joined(separator: "\n"),
                at: .init(file: file), hint: "fix every line listed, then import the whole file again")
        }
        _ = try workspace.currentProtocol()
        try workspace.store.enroll(enrollments, actor: workspace.actor, source: source, at: workspace.now())
        try workspace.checkpoint()
        return result
    }

    /// Imports a roster CSV (header `RosterEntry.csvHeader`, optionally a `site` column; `devices`
    /// separated by `;`).
    /// All or nothing: any bad line stores nothing and names file, line and field.
    public func importCSV(_ url: URL) throws -> [EnrolledParticipant] {
        let reader = try CSVReader(url: url)
        let file = url.path
        guard let header = try reader.next() else {
            throw CohortError.invalid("the roster file is empty", file: file, line: 1, hint: "the first line is the header: \(RosterEntry.csvHeader.joined(separator: ","))")
        }
        // A headerless roster's first line is a participant: it is never echoed (InputHeader).
        let names = try InputHeader.names(header, expected: RosterEntry.csvHeader + RosterEntry.optionalColumns, required: ["code", "name", "time_zone", "enrolled_on"], file: file)
        var index: [String: Int] = [:]
        for (i, key) in names.enumerated() { index[key] = i }
        var entries: [(RosterEntry, line: Int?)] = []
        var unreadable: [CohortError] = []
        while let row = try reader.next() {
            guard row.fields.count == header.fields.count else {
                unreadable.append(
                    CohortError.invalid("expected \(header.fields.count) fields, found \(row.fields.count)", file: file, line: row.line,
                        hint: "quote fields that contain commas"))
                continue
            }
            func v(_ key: String) -> String? { index[key].map { row.fields[$0] } }
            let entry = RosterEntry(
                code: v("code") ?? "", name: v("name") ?? "", email: v("email"), phone: v("phone"), birthDate: v("birth_date"), sex: v("sex"),
                address: v("address"), zip: v("zip"), mrn: v("mrn"), timeZone: v("time_zone") ?? "", enrolledOn: v("enrolled_on") ?? "",
                devices: (v("devices") ?? "").split(separator: ";").map(String.init), site: v("site"))
            entries.append((entry, row.line))
        }
        guard !entries.isEmpty || !unreadable.isEmpty else { throw CohortError.invalid("the roster has a header but no participants", file: file, line: 2) }
        return try enroll(entries, file: file, source: "roster", problems: unreadable)
    }
}
