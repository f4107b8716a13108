import CohortCore
public import CohortDeid
import CohortPackage
public import Foundation
import CohortIO

/// What `cohort deid risk` found: the measures, and what the export's own report claimed.
public struct DeidRiskAssessment: Sendable, Codable {
    /// The archive or bag folder assessed (as given).
    public var source: String
    /// The measures recomputed from the published files.
    public var risk: ReidentificationRisk
    /// The k the protocol asked for, per the export's de-identification report (nil: none).
    public var requestedK: Int?
    /// The k the export's report states (nil: none stated).
    public var statedK: Int?
    /// Differences between the report and the published files (columns published but not
    /// treated as quasi-identifiers, stated k not matching).
    public var warnings: [String]
    /// What each attack on the date shift achieved from the published files (nil: the export
    /// shifts nothing or publishes no record times).
    public var timeAttacks: [TimeAttacks.Outcome]?
    /// The attacks whose signal the export's report states as recoverable (`recoverable_signals`).
    public var statedSignals: [String] = []
    /// Signals the report states that no attack here runs (e.g. the study start, which is not in
    /// the files), as the report words them.
    public var unattackedSignals: [String] = []
    /// Record-derived attributes an acquaintance can know, added to the quasi-identifiers for
    /// ``acquaintanceK``.
    public var acquaintanceAttributes: [String] = []
    /// k over the quasi-identifiers plus ``acquaintanceAttributes`` (nil: no records).
    public var acquaintanceK: Int?
    /// The report says the export only states the k over what an acquaintance knows
    /// (`record_attributes_enforced: false`) instead of reaching the requested k over it.
    public var acquaintanceKOnlyStated = false

    /// Whether the published files hold what the report claims: k reaches the requested k and
    /// equals the stated k, also over what an acquaintance knows; no attack recovers a shift; no
    /// attack the report does not name as a recoverable signal narrows one. (An export whose
    /// report says it only states the k over the acquaintance attributes is held to its
    /// participant columns there; the shortfall is a warning.)
    public var holds: Bool {
        if let requestedK, (risk.k ?? 0) < requestedK, risk.records > 0 { return false }
        if let statedK, statedK != risk.k { return false }
        if let requestedK, let acquaintanceK, acquaintanceK < requestedK, !acquaintanceKOnlyStated { return false }
        for outcome in timeAttacks ?? [] {
            if outcome.recovered > 0 { return false }
            if outcome.narrowed > 0, outcome.attack != "combined", !statedSignals.contains(outcome.attack) { return false }
        }
        return true
    }

    enum CodingKeys: String, CodingKey {
        case source, risk, warnings, holds
        case requestedK = "requested_k"
        case statedK = "stated_k"
        case timeAttacks = "time_attacks"
        case statedSignals = "stated_signals"
        case unattackedSignals = "unattacked_signals"
        case acquaintanceAttributes = "acquaintance_attributes"
        case acquaintanceK = "acquaintance_k"
        case acquaintanceKOnlyStated = "acquaintance_k_only_stated"
    }

    /// Encodes the assessment with `holds` stated next to the figures.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(source, forKey: .source)
        try c.encode(risk, forKey: .risk)
        try c.encodeIfPresent(requestedK, forKey: .requestedK)
        try c.encodeIfPresent(statedK, forKey: .statedK)
        try c.encode(warnings, forKey: .warnings)
        try c.encodeIfPresent(timeAttacks, forKey: .timeAttacks)
        try c.encode(statedSignals, forKey: .statedSignals)
        try c.encode(unattackedSignals, forKey: .unattackedSignals)
        try c.encode(acquaintanceAttributes, forKey: .acquaintanceAttributes)
        try c.encodeIfPresent(acquaintanceK, forKey: .acquaintanceK)
        try c.encode(acquaintanceKOnlyStated, forKey: .acquaintanceKOnlyStated)
        try c.encode(holds, forKey: .holds)
    }

    /// Decodes an assessment written by ``encode(to:)`` (`holds` is recomputed, not read).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        source = try c.decode(String.self, forKey: .source)
        risk = try c.decode(ReidentificationRisk.self, forKey: .risk)
        requestedK = try c.decodeIfPresent(Int.self, forKey: .requestedK)
        statedK = try c.decodeIfPresent(Int.self, forKey: .statedK)
        warnings = try c.decode([String].self, forKey: .warnings)
        timeAttacks = try c.decodeIfPresent([TimeAttacks.Outcome].self, forKey: .timeAttacks)
        statedSignals = try c.decodeIfPresent([String].self, forKey: .statedSignals) ?? []
        unattackedSignals = try c.decodeIfPresent([String].self, forKey: .unattackedSignals) ?? []
        acquaintanceAttributes = try c.decodeIfPresent([String].self, forKey: .acquaintanceAttributes) ?? []
        acquaintanceK = try c.decodeIfPresent(Int.self, forKey: .acquaintanceK)
        acquaintanceKOnlyStated = try c.decodeIfPresent(Bool.self, forKey: .acquaintanceKOnlyStated) ?? false
    }

    init(source: String, risk: ReidentificationRisk, requestedK: Int?, statedK: Int?, warnings: [String]) {
        self.source = source
        self.risk = risk
        self.requestedK = requestedK
        self.statedK = statedK
        self.warnings = warnings
    }
}

/// `cohort deid risk`: re-identification risk of an export computed from its published files
/// alone — no workspace, no keys, no protocol. Reads `data/reports/deidentification.json` for the
/// quasi-identifier columns and sensitive fields, `data/csv/participants.csv` for the classes, and
/// the sensitive fields' CSV tables for l-diversity.
public enum DeidRiskService {
    static let reportPath = "data/reports/deidentification.json"
    static let participantsPath = "data/csv/participants.csv"

    /// Assesses the archive (`.tar.gz`) or unpacked bag folder at `path`. `extraSensitive` adds
    /// sensitive fields (`table.column` of the CSV files) to those the report names; `archive`
    /// is a public weather archive the exogenous attack aligns published series with
    /// (``readWeatherArchive(_:)``; nil: dated weather counts as recovered).
    ///
    /// - Throws: `CohortError` naming the file (and line) that is missing or unreadable.
    public static func assess(path: URL, extraSensitive: [String] = [], archive: WeatherArchive? = nil) throws -> DeidRiskAssessment {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: path.path, isDirectory: &isDirectory) else {
            throw CohortError(.notFound, "no such archive or bag folder", at: .init(file: path.path), hint: "give an export .tar.gz or its unpacked bag folder")
        }
        var temporary: URL?
        defer { if let temporary { try? fm.removeItem(at: temporary) } }
        let bag: URL
        if isDirectory.boolValue {
            bag = path
        } else {
            bag = try unpackedBag(path)
            temporary = bag
        }
        let reportFile = try readReportFile(bag.appendingPathComponent(reportPath), shownAs: reportPath)
        let report = reportFile.kAnonymity
        let participantsURL = bag.appendingPathComponent(participantsPath)
        guard fm.fileExists(atPath: participantsURL.path) else {
            throw CohortError(
                .notFound, "the export has no participant table", at: .init(file: participantsPath),
                hint: "cohort deid risk reads the CSV format; export with --format csv")
        }
        let (header, table) = try readCSV(participantsURL, shownAs: participantsPath)
        guard let keyColumn = header.firstIndex(of: "pseudonym") else {
            throw CohortError(.invalidInput, "expected a pseudonym column", at: .init(file: participantsPath, line: 1, field: "pseudonym"), hint: "is this a cohort export?")
        }
        let published = header.filter { $0 != "pseudonym" }
        var warnings: [String] = []
        var quasiIdentifiers = report?.quasiIdentifiers ?? published
        for column in quasiIdentifiers where !header.contains(column) {
            warnings.append("the report names quasi-identifier \(column), which participants.csv does not publish")
        }
        quasiIdentifiers = quasiIdentifiers.filter(header.contains)
        for column in published where !quasiIdentifiers.contains(column) {
            warnings.append("participants.csv publishes \(column), which the report does not treat as a quasi-identifier")
        }
        let indices = quasiIdentifiers.compactMap { header.firstIndex(of: $0) }
        let rows = table.map { row in indices.map { $0 < row.count ? row[$0] : "" } }
        let keys = table.map { keyColumn < $0.count ? $0[keyColumn] : "" }

        var sensitiveNames = (report?.sensitive ?? []).map { "\($0.table).\($0.column)" }
        for name in extraSensitive where !sensitiveNames.contains(name) { sensitiveNames.append(name) }
        let sensitive = try sensitiveNames.map { try sensitiveValues($0, bag: bag) }
        let risk = ReidentificationRisk(quasiIdentifiers: quasiIdentifiers, rows: rows, keys: keys, sensitive: sensitive)
        if let stated = report?.achievedK, stated != risk.k {
            warnings.append("the report states k = \(stated); the published participants.csv has k = \(risk.k.map(String.init) ?? "n/a")")
        }
        var assessment = DeidRiskAssessment(
            source: path.path, risk: risk, requestedK: report?.requestedK, statedK: report?.achievedK, warnings: warnings)
        try assessTime(
            &assessment, bag: bag, report: reportFile, participants: (header, table), quasiIdentifiers: quasiIdentifiers, archive: archive)
        return assessment
    }

    /// A new private temporary folder holding what ``assess(path:extraSensitive:archive:)`` reads
    /// of the export `archive`: the report and the CSV tables (nothing else is written to disk).
    static func unpackedBag(_ archive: URL) throws -> URL {
        let fm = FileManager.default
        let folder = fm.temporaryDirectory.appendingPathComponent("cohort-risk-\(UUID().uuidString)", isDirectory: true)
        try fm.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        do {
            _ = try ArchiveMembers.extract(archive: archive, into: folder) {
                $0 == reportPath || $0 == "bag-info.txt" || ($0.hasPrefix("data/csv/") && $0.hasSuffix(".csv"))
            }
        } catch {
            try? fm.removeItem(at: folder)
            throw error
        }
        return folder
    }

    /// The values of the sensitive field `name` (`table.column`) per participant, read from the
    /// bag's CSV table.
    static func sensitiveValues(_ name: String, bag: URL) throws -> (field: String, values: [String: Set<String>]) {
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            throw CohortError(.invalidInput, "expected a sensitive field as table.column, e.g. medications.text", at: .init(field: "sensitive"))
        }
        let relative = "data/csv/\(parts[0]).csv"
        let url = bag.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw CohortError(.notFound, "the export has no table for a sensitive field", at: .init(file: relative), hint: "name a table.column of the export's CSV files")
        }
        return (name, try values(of: parts[1], in: url, shownAs: relative))
    }

    /// The parts of `k_anonymity` in the de-identification report the risk report uses.
    struct ReportKAnonymity: Decodable {
        var requestedK: Int?
        var achievedK: Int?
        var quasiIdentifiers: [String]?
        var sensitive: [SensitiveField]?
        var recordAttributesEnforced: Bool?

        enum CodingKeys: String, CodingKey {
            case sensitive
            case recordAttributesEnforced = "record_attributes_enforced"
            case requestedK = "requested_k"
            case achievedK = "achieved_k"
            case quasiIdentifiers = "quasi_identifiers"
        }
    }

    /// The parts of `date_shift` in the de-identification report the time attacks use.
    struct ReportDateShift: Decodable {
        var rangeDays: [Int]?
        var wholeWeeks: Bool?
        var recoverableSignals: [String]?
        enum CodingKeys: String, CodingKey {
            case rangeDays = "range_days"
            case wholeWeeks = "whole_weeks"
            case recoverableSignals = "recoverable_signals"
        }
    }

    struct ReportFile: Decodable {
        var kAnonymity: ReportKAnonymity?
        var dateShift: ReportDateShift?
        enum CodingKeys: String, CodingKey {
            case kAnonymity = "k_anonymity"
            case dateShift = "date_shift"
        }
    }

    /// The report's k-anonymity section; nil when the export states none.
    static func readReport(_ url: URL, shownAs name: String) throws -> ReportKAnonymity? {
        try readReportFile(url, shownAs: name).kAnonymity
    }

    /// The report's sections the risk report uses.
    static func readReportFile(_ url: URL, shownAs name: String) throws -> ReportFile {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw CohortError(.notFound, "the export has no de-identification report", at: .init(file: name), hint: "is this a cohort export bag or archive?")
        }
        do {
            return try JSONDecoder().decode(ReportFile.self, from: data)
        } catch {
            throw CohortError(.invalidInput, "the de-identification report is not valid JSON of the expected shape", at: .init(file: name), hint: "run `cohort verify` on the export")
        }
    }

    /// The header and rows of a CSV file.
    static func readCSV(_ url: URL, shownAs name: String) throws -> (header: [String], rows: [[String]]) {
        let reader = try CSVReader(url: url)
        guard let header = try reader.next()?.fields else {
            throw CohortError(.invalidInput, "expected a header row", at: .init(file: name, line: 1), hint: "is this a cohort export?")
        }
        var rows: [[String]] = []
        while let row = try reader.next() {
            guard row.fields.count == header.count else {
                throw CohortError(
                    .invalidInput, "expected \(header.count) fields, found \(row.fields.count)", at: .init(file: name, line: row.line),
                    hint: "run `cohort verify` on the export")
            }
            rows.append(row.fields)
        }
        return (header, rows)
    }

    /// Each pseudonym's set of values in `column` of the table at `url`, streamed.
    static func values(of column: String, in url: URL, shownAs name: String) throws -> [String: Set<String>] {
        let reader = try CSVReader(url: url)
        guard let header = try reader.next()?.fields else {
            throw CohortError(.invalidInput, "expected a header row", at: .init(file: name, line: 1))
        }
        guard let key = header.firstIndex(of: "pseudonym"), let index = header.firstIndex(of: column) else {
            throw CohortError(
                .invalidInput, "expected a pseudonym column and the sensitive column", at: .init(file: name, line: 1, field: column),
                hint: "columns: \(header.joined(separator: ", "))")
        }
        var values: [String: Set<String>] = [:]
        while let row = try reader.next() {
            guard key < row.fields.count, index < row.fields.count else {
                throw CohortError(.invalidInput, "expected \(header.count) fields", at: .init(file: name, line: row.line))
            }
            values[row.fields[key], default: []].insert(row.fields[index])
        }
        return values
    }
}
