import CohortCore
import CohortIO
package import Foundation

/// `cohort verify`'s consent check, recomputed from the package alone: every published
/// participant has a consent in force whose version the protocol accepts and whose sharing scope
/// allows the export's audience, and every published record falls under a consent version that
/// covers its data type — from `consents`, `participants` and the family tables of each tabular
/// rendering the signed manifest lists (CSV and NDJSON, each judged on its own: a record published
/// in one rendering only is judged too) and the consent facts the signed manifest carries
/// (``ExportManifest/ConsentBasis``). The FHIR rendering is not judged (docs/auditors-guide.md).
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

    /// The bag's files ``run(bag:manifest:)`` reads: the folder of each rendering whose consents
    /// table the signed manifest lists (`data/csv/`, `data/json/`); both when it lists neither or
    /// there is no manifest. Whole folders, so no table of records can be left out.
    public static func reads(_ manifest: ExportManifest?) -> ExtraVerificationCheck.Reads {
        let listed = TableSource.listedFolders(manifest)
        let folders = listed.isEmpty ? ["data/csv/", "data/json/"] : listed
        return .files { path in folders.contains { path.hasPrefix($0) } }
    }

    /// Runs the check on the extracted bag at `bag` with the manifest's facts.
    public static func run(bag: URL, manifest: ExportManifest?) -> VerificationCheck {
        guard let manifest else { return fail("not checked: no readable manifest") }
        guard let basis = manifest.consent else {
            return fail("the signed manifest carries no consent facts (an export made before consent governed exports): consent cannot be recomputed")
        }
        do {
            let sources = TableSource.sources(bag: bag, manifest: manifest)
            guard !sources.isEmpty else {
                return fail("the package has no CSV or JSON consents and participants tables to recompute consent from")
            }
            // Every table of each rendering read, as the signed manifest lists them: a record table
            // absent here would otherwise count as no records rather than as unchecked ones.
            let absent = manifest.files.map(\.path).filter { path in
                sources.contains { path.hasPrefix($0.folder) } && !FileManager.default.fileExists(atPath: bag.appendingPathComponent(path).path)
            }
            guard absent.isEmpty else {
                return fail("not checked: \(absent.count) file(s) the signed manifest lists were not there to read: " + absent.prefix(3).joined(separator: ", "))
            }
            // The renderings are judged at once, one thread each (verify inflates on one), and
            // reported in order: the first with a problem or an error decides the line.
            let outcomes = try Parallel.map(sources, threads: sources.count) { source in
                Result { () throws -> (folder: String, participants: Int, records: Int, problems: [String]) in
                    var state = try State(basis: basis)
                    try state.readParticipants(source)
                    try state.readConsents(source)
                    state.judgeParticipants()
                    for type in DataType.allCases { try state.readRecords(source, type: type) }
                    return (source.folder, state.participants.count, state.records, state.problems)
                }
            }
            var judged: [(folder: String, participants: Int, records: Int)] = []
            for outcome in outcomes {
                let rendering = try outcome.get()
                guard rendering.problems.isEmpty else { return fail(Verifier.summarize(rendering.problems)) }
                judged.append((rendering.folder, rendering.participants, rendering.records))
            }
            return VerificationCheck(name: name, passed: true, detail: detail(judged, audience: basis.audience))
        } catch let error as CohortError {
            return fail("could not be recomputed: \(error.message)")
        } catch {
            return fail("could not be recomputed")
        }
    }

    private static func fail(_ detail: String) -> VerificationCheck { VerificationCheck(name: name, passed: false, detail: detail) }

    /// `N participants each with a consent in force allowing A; R records of data/csv/ and R of
    /// data/json/ each covered by its consent version` (participants per folder when they differ).
    private static func detail(_ judged: [(folder: String, participants: Int, records: Int)], audience: String) -> String {
        let counts = Set(judged.map(\.participants))
        let participants =
            counts.count == 1
            ? "\(judged[0].participants) participants"
            : judged.map { "\($0.participants) participants of \($0.folder)" }.joined(separator: " and ")
        let records = judged.enumerated().map { index, rendering in
            index == 0 ? "\(rendering.records) records of \(rendering.folder)" : "\(rendering.records) of \(rendering.folder)"
        }
        return "\(participants) each with a consent in force allowing \(audience); \(records.joined(separator: " and ")) each covered by its consent version"
    }

    /// One published consent row.
    struct Row {
        var version: String
        var sharing: String
        var status: String
        var signedAt: Int64?
        var line: Int
    }

    /// The published tables, as CSV or as NDJSON.
    enum TableSource: Sendable {
        /// The longest NDJSON line read (a row with a long note is kilobytes).
        static let maxLineBytes = 64 << 20

        case csv(URL)
        case json(URL)

        /// The bag-relative folder of the tables (`data/csv/`, `data/json/`).
        var folder: String {
            switch self {
            case .csv: "data/csv/"
            case .json: "data/json/"
            }
        }

        /// The folders of the renderings whose consents table `manifest` lists.
        static func listedFolders(_ manifest: ExportManifest?) -> [String] {
            let paths = Set(manifest?.files.map(\.path) ?? [])
            return [("data/csv/", "consents.csv"), ("data/json/", "consents.ndjson")].compactMap { paths.contains($0.0 + $0.1) ? $0.0 : nil }
        }

        /// The renderings to judge: each whose consents table the signed manifest lists (CSV
        /// first); when it lists neither, each whose consents table is in the bag.
        static func sources(bag: URL, manifest: ExportManifest) -> [TableSource] {
            let data = bag.appendingPathComponent("data")
            let all: [(folder: String, source: TableSource, consents: String)] = [
                ("data/csv/", .csv(data.appendingPathComponent("csv")), "consents.csv"),
                ("data/json/", .json(data.appendingPathComponent("json")), "consents.ndjson"),
            ]
            let listed = listedFolders(manifest)
            if !listed.isEmpty { return all.filter { listed.contains($0.folder) }.map(\.source) }
            return all.filter { FileManager.default.fileExists(atPath: bag.appendingPathComponent($0.folder + $0.consents).path) }.map(\.source)
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
                guard FileManager.default.fileExists(atPath: url.path) else {
                    if mustExist { throw CohortError(.integrity, "\(path) is missing", at: .init(file: path)) }
                    return
                }
                // Streamed a line at a time (a table of records is hundreds of megabytes at bench
                // L), each line read by the strict flat-object reader; an empty line is skipped.
                let parser = FlatJSONObject.Parser(keys: required + optional)
                try LineReader.forEachLine(of: url, maxLineBytes: Self.maxLineBytes) { line, bytes in
                    guard !bytes.isEmpty else { return }
                    do throws(FlatJSONObject.Refusal) {
                        try parser.read(bytes)
                    } catch {
                        throw CohortError(
                            .integrity, "\(path) line \(line) is not a flat JSON object: expected \(error.reason)", at: .init(file: path, line: line))
                    }
                    var fields: [String: String] = [:]
                    for (column, value) in zip(parser.keys, parser.values) {
                        if case .string(let text)? = value, !text.isEmpty { fields[column] = text }
                    }
                    for (index, column) in required.enumerated() where parser.values[index] == nil {
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
