import CohortCore
import CohortIO
package import Foundation

/// `cohort verify`'s consent check, recomputed from the package alone: every published
/// participant has a consent in force whose version the protocol accepts and whose sharing scope
/// allows the export's audience, and every published record falls under a consent version that
/// covers its data type — from `consents`, `participants` and the family tables (CSV, else NDJSON)
/// and the consent facts the signed manifest carries (``ExportManifest/ConsentBasis``).
///
/// It shares no code with the export's decision (`ConsentRules.exportDecision`): it reads what
/// was published. The rules, as an auditor states them:
/// - a participant published as `active` needs an `active` consent row; one published as
///   `stopped` (no new data, data so far stays) needs a last row that is not `superseded`; a
///   participant published as `excluded` or `erased` must not be in the package at all;
/// - that consent's version is listed and accepted, and its scope allows the audience;
/// - a record's governing consent is the last one signed at or before its `start` (the first
///   consent for earlier records), or the latest later version marked retroactive; its version
///   must be accepted and cover the record's data type;
/// - consents are published oldest first; one without `signed_at` (signed past the export's
///   embargo horizon, or a policy that drops the field) comes after every dated one of its
///   participant and starts no segment a published record falls in.
package enum ConsentCheck {
    /// The check's name in the report.
    public static let name = "consent"

    /// The bag's files ``run(bag:manifest:)`` reads: every CSV table when the signed manifest
    /// lists `data/csv/consents.csv` (the check then reads CSV), otherwise every CSV and NDJSON
    /// table (with no manifest too). Whole folders, so no table of records can be left out.
    public static func reads(_ manifest: ExportManifest?) -> ExtraVerificationCheck.Reads {
        let csvListed = manifest?.files.contains { $0.path == "data/csv/consents.csv" } == true
        return .files { path in path.hasPrefix("data/csv/") || (!csvListed && path.hasPrefix("data/json/")) }
    }

    /// Runs the check on the extracted bag at `bag` with the manifest's facts.
    public static func run(bag: URL, manifest: ExportManifest?) -> VerificationCheck {
        guard let manifest else { return fail("not checked: no readable manifest") }
        guard let basis = manifest.consent else {
            return fail("the signed manifest carries no consent facts (an export made before consent governed exports): consent cannot be recomputed")
        }
        do {
            var state = try State(basis: basis)
            guard let source = TableSource(bag: bag) else {
                return fail("the package has no CSV or JSON consents and participants tables to recompute consent from")
            }
            // Every table of the rendering read, as the signed manifest lists them: a record table
            // absent here would otherwise count as no records rather than as unchecked ones.
            let absent = manifest.files.map(\.path).filter {
                $0.hasPrefix(source.folder) && !FileManager.default.fileExists(atPath: bag.appendingPathComponent($0).path)
            }
            guard absent.isEmpty else {
                return fail("not checked: \(absent.count) file(s) the signed manifest lists were not there to read: " + absent.prefix(3).joined(separator: ", "))
            }
            try state.readParticipants(source)
            try state.readConsents(source)
            state.judgeParticipants()
            for type in DataType.allCases { try state.readRecords(source, type: type) }
            guard state.problems.isEmpty else { return fail(Verifier.summarize(state.problems)) }
            return VerificationCheck(
                name: name, passed: true,
                detail: "\(state.participants.count) participants each with a consent in force allowing \(basis.audience); "
                    + "\(state.records) records of \(source.folder) each covered by its consent version")
        } catch let error as CohortError {
            return fail("could not be recomputed: \(error.message)")
        } catch {
            return fail("could not be recomputed")
        }
    }

    private static func fail(_ detail: String) -> VerificationCheck { VerificationCheck(name: name, passed: false, detail: detail) }

    /// One published consent row.
    struct Row {
        var version: String
        var sharing: String
        var status: String
        var signedAt: Int64?
        var line: Int
    }

    /// The published tables, as CSV or as NDJSON.
    enum TableSource {
        case csv(URL)
        case json(URL)

        /// The bag-relative folder of the tables (`data/csv/`, `data/json/`).
        var folder: String {
            switch self {
            case .csv: "data/csv/"
            case .json: "data/json/"
            }
        }

        init?(bag: URL) {
            let data = bag.appendingPathComponent("data")
            let csv = data.appendingPathComponent("csv")
            let json = data.appendingPathComponent("json")
            if FileManager.default.fileExists(atPath: csv.appendingPathComponent("consents.csv").path) {
                self = .csv(csv)
            } else if FileManager.default.fileExists(atPath: json.appendingPathComponent("consents.ndjson").path) {
                self = .json(json)
            } else {
                return nil
            }
        }

        /// Calls `body` with each row's named fields (nil for an absent or empty one) and its
        /// line; `required` columns must exist. A missing table is `nil` (not an error) when optional.
        func forEachRow(
            _ table: String, required: [String], optional: [String] = [], mustExist: Bool,
            _ body: (_ fields: [String: String], _ line: Int, _ path: String) throws -> Void
        ) throws {
            switch self {
            case .csv(let folder):
                let url = folder.appendingPathComponent(table + ".csv")
                let path = "data/csv/\(table).csv"
                guard FileManager.default.fileExists(atPath: url.path) else {
                    if mustExist { throw CohortError(.integrity, "\(path) is missing", at: .init(file: path)) }
                    return
                }
                let reader = try CSVReader(url: url)
                guard let header = try reader.next() else { return }
                var index: [String: Int] = [:]
                for (i, name) in header.fields.enumerated() { index[name] = i }
                for column in required where index[column] == nil {
                    throw CohortError(.integrity, "\(path) has no \(column) column", at: .init(file: path, field: column))
                }
                let wanted = required + optional
                while let row = try reader.next() {
                    var fields: [String: String] = [:]
                    for column in wanted {
                        if let i = index[column], i < row.fields.count, !row.fields[i].isEmpty { fields[column] = row.fields[i] }
                    }
                    try body(fields, row.line, path)
                }
            case .json(let folder):
                let url = folder.appendingPathComponent(table + ".ndjson")
                let path = "data/json/\(table).ndjson"
                guard let data = FileManager.default.contents(atPath: url.path) else {
                    if mustExist { throw CohortError(.integrity, "\(path) is missing", at: .init(file: path)) }
                    return
                }
                var line = 0
                for text in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) where !text.isEmpty {
                    line += 1
                    guard let object = try? JSONSerialization.jsonObject(with: Data(text)) as? [String: Any] else {
                        throw CohortError(.integrity, "\(path) line \(line) is not a JSON object", at: .init(file: path, line: line))
                    }
                    var fields: [String: String] = [:]
                    for column in required + optional {
                        if let value = object[column] as? String, !value.isEmpty { fields[column] = value }
                    }
                    for column in required where object[column] == nil {
                        throw CohortError(.integrity, "\(path) line \(line) has no \(column)", at: .init(file: path, line: line, field: column))
                    }
                    try body(fields, line, path)
                }
            }
        }
    }

    /// What the check has read and found so far.
    struct State {
        let audience: String
        let scopes: [String: Set<String>]
        let versions: [String: ExportManifest.ConsentBasis.Version]
        /// Published participants: pseudonym → status (nil when the column is absent).
        var participants: [String: String?] = [:]
        var consents: [String: [Row]] = [:]
        /// Per participant: segment starts (after the first) and the data types each segment allows.
        var segments: [String: (starts: [Int64], types: [Set<String>])] = [:]
        var problems: [String] = []
        var records = 0

        init(basis: ExportManifest.ConsentBasis) throws {
            audience = basis.audience
            var scopes: [String: Set<String>] = [:]
            for (scope, audiences) in basis.scopes { scopes[scope] = Set(audiences) }
            self.scopes = scopes
            var versions: [String: ExportManifest.ConsentBasis.Version] = [:]
            for version in basis.versions { versions[version.version] = version }
            self.versions = versions
        }

        mutating func readParticipants(_ source: TableSource) throws {
            try source.forEachRow("participants", required: ["pseudonym"], optional: ["status"], mustExist: true) { fields, line, path in
                guard let pseudonym = fields["pseudonym"] else {
                    problems.append("\(path):\(line): a participant row without a pseudonym")
                    return
                }
                participants[pseudonym] = fields["status"]
            }
        }

        mutating func readConsents(_ source: TableSource) throws {
            try source.forEachRow(
                "consents", required: ["pseudonym", "version", "sharing", "status"], optional: ["signed_at"], mustExist: true
            ) { fields, line, path in
                guard let pseudonym = fields["pseudonym"], let version = fields["version"], let sharing = fields["sharing"],
                    let status = fields["status"]
                else {
                    problems.append("\(path):\(line): a consent row without pseudonym, version, sharing or status")
                    return
                }
                var signedAt: Int64?
                if let text = fields["signed_at"] {
                    guard let instant = Timestamp.parse(text, defaultTimeZone: nil) else {
                        problems.append("\(path):\(line): signed_at is not an ISO 8601 instant")
                        return
                    }
                    signedAt = instant.epochMilliseconds
                }
                consents[pseudonym, default: []].append(Row(version: version, sharing: sharing, status: status, signedAt: signedAt, line: line))
            }
        }

        /// Each published participant's consent in force, version and scope; their segments for the records.
        mutating func judgeParticipants() {
            for (pseudonym, status) in participants.sorted(by: { $0.key < $1.key }) {
                let rows = consents[pseudonym] ?? []
                let what = "participant \(pseudonym)"
                if let status, status != "active" && status != "stopped" {
                    problems.append("\(what) is published with status \(status), which no export may include")
                    continue
                }
                // Undated after dated, each in published order (packages made before the embargo
                // covered signings date every consent and order the same as before).
                let ordered = rows.enumerated().sorted { a, b in
                    (a.element.signedAt ?? .max, a.offset) < (b.element.signedAt ?? .max, b.offset)
                }.map(\.element)
                let inForce =
                    status == "stopped"
                    ? ordered.last { $0.status != "superseded" }
                    : ordered.last { $0.status == "active" }
                guard let inForce else {
                    problems.append("\(what) has no consent in force in consents")
                    continue
                }
                guard let version = versions[inForce.version], version.accepted else {
                    problems.append("\(what)'s consent in force (line \(inForce.line)) is of a version the protocol does not accept")
                    continue
                }
                guard scopes[inForce.sharing]?.contains(audience) == true else {
                    problems.append("\(what)'s consent in force (line \(inForce.line)) has a sharing scope that does not allow \(audience)")
                    continue
                }
                if let undated = rows.firstIndex(where: { $0.signedAt == nil }), let dated = rows.lastIndex(where: { $0.signedAt != nil }), dated > undated {
                    problems.append(
                        "\(what)'s consent without signed_at (line \(rows[undated].line)) is listed before a dated one (line \(rows[dated].line)): consents are published oldest first")
                    continue
                }
                var starts: [Int64] = []
                var types: [Set<String>] = []
                for (index, row) in ordered.enumerated() {
                    let governing = ordered[(index + 1)...].last { versions[$0.version]?.retroactive == true } ?? row
                    let version = versions[governing.version]
                    if index > 0 { starts.append(row.signedAt ?? .max) }
                    types.append(version?.accepted == true ? Set(version?.covers ?? []) : [])
                }
                segments[pseudonym] = (starts, types)
            }
        }

        mutating func readRecords(_ source: TableSource, type: DataType) throws {
            try source.forEachRow(type.tableName, required: ["pseudonym"], optional: ["start"], mustExist: false) { fields, line, path in
                records += 1
                guard let pseudonym = fields["pseudonym"], participants[pseudonym] != nil else {
                    problems.append("\(path):\(line): a record of a participant who is not published")
                    return
                }
                guard let segment = segments[pseudonym] else { return }  // the participant's own problem is reported
                var index = 0
                if !segment.starts.isEmpty {
                    if let text = fields["start"], let start = Timestamp.parse(text, defaultTimeZone: nil) {
                        while index < segment.starts.count && segment.starts[index] <= start.epochMilliseconds { index += 1 }
                    } else if Set(segment.types.map { $0.contains(type.rawValue) }).count > 1 {
                        problems.append("\(path):\(line): no start to tell which of the participant's consents governs the record")
                        return
                    }
                }
                if !segment.types[index].contains(type.rawValue) {
                    problems.append("\(path):\(line): a \(type.rawValue) record its governing consent version does not cover")
                }
            }
        }
    }
}
