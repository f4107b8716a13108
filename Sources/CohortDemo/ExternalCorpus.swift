public import CohortCore
public import Foundation

/// A free-text de-identification corpus written by someone else (such as `../shared/deid-corpus`):
/// a roster in `cohort participant import`'s format and an answer key `truth.json` with every
/// planted identifier (`kind`, `form`, `cores`, the whole `note`), clean notes and medication
/// probes. Read only; cohort never writes it.
public struct ExternalCorpus: Sendable {
    /// One planted identifier.
    public struct Plant: Sendable, Decodable {
        public var participant: String
        public var kind: String
        public var form: String
        public var text: String
        /// The words that identify (a plant leaks when all of them survive).
        public var cores: [String]
        public var note: String
    }

    /// A clean note: no token of it should change.
    public struct CleanNote: Sendable, Decodable {
        public var participant: String
        public var note: String
    }

    /// A medication text with a planted identifier (`core`).
    public struct MedicationProbe: Sendable, Decodable {
        public var participant: String
        public var text: String
        public var core: String
    }

    /// An identity the generator used (for the birth date in every rendering).
    public struct Identity: Sendable, Decodable {
        public var code: String
        public var dob: String?
    }

    struct Truth: Decodable {
        var participants: [Identity]
        var planted: [Plant]
        var clean: [CleanNote]
        var med_probes: [MedicationProbe]
    }

    public var participants: [Participant]
    public var identities: [Identity]
    public var plants: [Plant]
    public var clean: [CleanNote]
    public var medicationProbes: [MedicationProbe]

    /// Reads `roster.csv` and `truth.json` from `directory`.
    public init(directory: URL) throws {
        let rosterURL = directory.appendingPathComponent("roster.csv")
        let truthURL = directory.appendingPathComponent("truth.json")
        guard let rosterData = FileManager.default.contents(atPath: rosterURL.path),
            let truthData = FileManager.default.contents(atPath: truthURL.path)
        else {
            throw CohortError(.notFound, "the corpus has no roster.csv or truth.json", at: .init(file: directory.path))
        }
        let truth: Truth
        do {
            truth = try JSONDecoder().decode(Truth.self, from: truthData)
        } catch {
            throw CohortError(.invalidInput, "the corpus answer key cannot be read", at: .init(file: truthURL.path))
        }
        participants = try Self.roster(String(decoding: rosterData, as: UTF8.self), path: rosterURL.path)
        identities = truth.participants
        plants = truth.planted
        clean = truth.clean
        medicationProbes = truth.med_probes
    }

    /// A corpus from its parts (a generated one, see ``TemplateCorpus``).
    public init(participants: [Participant], identities: [Identity], plants: [Plant], clean: [CleanNote], medicationProbes: [MedicationProbe]) {
        self.participants = participants
        self.identities = identities
        self.plants = plants
        self.clean = clean
        self.medicationProbes = medicationProbes
    }

    /// Participants from a roster CSV (`code,name,email,phone,birth_date,sex,address,zip,mrn,
    /// time_zone,enrolled_on,devices`, devices joined by `;`).
    static func roster(_ text: String, path: String) throws -> [Participant] {
        let rows = CSVRows.parse(text)
        guard let header = rows.first else { return [] }
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        guard let code = column("code"), let name = column("name") else {
            throw CohortError(.invalidInput, "the roster has no code or name column", at: .init(file: path))
        }
        var result: [Participant] = []
        for (number, row) in rows.dropFirst().enumerated() where row.count == header.count {
            func value(_ name: String) -> String? {
                guard let i = column(name), !row[i].isEmpty else { return nil }
                return row[i]
            }
            let identity = ParticipantIdentity(
                name: row[name], email: value("email"), phone: value("phone"), birthDate: value("birth_date").flatMap { CivilDate(iso: $0) },
                address: value("address"), zip: value("zip"), mrn: value("mrn"),
                devices: value("devices")?.split(separator: ";").map(String.init) ?? [])
            let id = UUID(uuid: Self.uuidBytes(number))
            result.append(
                Participant(
                    id: id, code: row[code], sex: Sex(lenient: value("sex") ?? "") ?? .unknown, timeZone: value("time_zone") ?? "UTC",
                    enrolledOn: value("enrolled_on").flatMap { CivilDate(iso: $0) } ?? CivilDate(daysSinceEpoch: 20_000), identity: identity))
        }
        return result
    }

    private static func uuidBytes(_ n: Int) -> uuid_t {
        let b = withUnsafeBytes(of: UInt64(n + 1).bigEndian) { Array($0) }
        return (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, b[2], b[3], b[4], b[5], b[6], b[7])
    }
}

/// RFC 4180 rows (quoted cells may hold commas, quotes and line breaks).
public enum CSVRows {
    /// The rows of `text`, each a list of cells (a final line without a line break counts).
    public static func parse(_ text: String) -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var cell = ""
        var inQuotes = false
        var iterator = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar?
        while let c = pending ?? iterator.next() {
            pending = nil
            if inQuotes {
                if c == "\"" {
                    let next = iterator.next()
                    if next == "\"" {
                        cell.unicodeScalars.append("\"")
                    } else {
                        inQuotes = false
                        pending = next
                    }
                } else {
                    cell.unicodeScalars.append(c)
                }
            } else if c == "\"" {
                inQuotes = true
            } else if c == "," {
                row.append(cell)
                cell = ""
            } else if c == "\n" {
                row.append(cell)
                rows.append(row)
                row = []
                cell = ""
            } else if c != "\r" {
                cell.unicodeScalars.append(c)
            }
        }
        if !cell.isEmpty || !row.isEmpty {
            row.append(cell)
            rows.append(row)
        }
        return rows
    }
}
