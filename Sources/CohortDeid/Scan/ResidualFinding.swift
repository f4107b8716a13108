/// One place where an output file still holds a participant identifier: file, line, field and
/// kind — never the value, so the finding can be shown, logged and put in a report. The value's
/// SHA-256 is kept so a reviewer can approve this exact value (see ``ResidualExceptionList``);
/// ``description`` does not show it.
public struct ResidualFinding: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The file's path (relative to the scanned directory when a directory was scanned).
    public var file: String
    /// 1-based line number (where the value starts).
    public var line: Int
    /// What kind of identifier the value holds.
    public var kind: IdentifierKind
    /// The table the file holds: the file name without extension (`symptom_logs`, `Observation`),
    /// `Bundle` for FHIR collection bundles.
    public var table: String
    /// The CSV column name or the JSON key path (`note`, `note.text`, `device.display`); nil for
    /// a line of a plain text file.
    public var field: String?
    /// SHA-256 (hex) of the exact value (the unquoted CSV cell, the unescaped JSON string; line
    /// breaks inside a CSV cell count as `\n`), or of the whole line for plain text.
    public var valueSHA256: String

    /// A finding in `file` at `line`.
    package init(file: String, line: Int, kind: IdentifierKind, table: String? = nil, field: String? = nil, valueSHA256: String = "") {
        self.file = file
        self.line = line
        self.kind = kind
        self.table = table ?? ResidualFinding.table(ofFile: file)
        self.field = field
        self.valueSHA256 = valueSHA256
    }

    /// `data/csv/symptom_logs.csv:12: note: name`.
    public var description: String { "\(file):\(line): \(field.map { "\($0): " } ?? "")\(kind.rawValue)" }

    /// Ordered by file, line, field, kind.
    public static func < (lhs: ResidualFinding, rhs: ResidualFinding) -> Bool {
        (lhs.file, lhs.line, lhs.field ?? "", lhs.kind) < (rhs.file, rhs.line, rhs.field ?? "", rhs.kind)
    }

    /// The table a file holds: its name without extension, `Bundle` inside a `bundles` folder.
    public static func table(ofFile path: String) -> String {
        let parts = path.split(separator: "/")
        guard let name = parts.last else { return path }
        if parts.count >= 2, parts[parts.count - 2] == "bundles" { return "Bundle" }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex { return String(name[..<dot]) }
        return String(name)
    }

    enum CodingKeys: String, CodingKey {
        case file, line, kind, table, field
        case valueSHA256 = "value_sha256"
    }

    /// Decodes a finding; reports written before findings named tables and fields decode too.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        file = try c.decode(String.self, forKey: .file)
        line = try c.decode(Int.self, forKey: .line)
        kind = try c.decode(IdentifierKind.self, forKey: .kind)
        table = try c.decodeIfPresent(String.self, forKey: .table) ?? ResidualFinding.table(ofFile: file)
        field = try c.decodeIfPresent(String.self, forKey: .field)
        valueSHA256 = try c.decodeIfPresent(String.self, forKey: .valueSHA256) ?? ""
    }
}

/// The outcome of scanning a set of files.
public struct ResidualScanResult: Sendable, Hashable, Codable {
    /// How many files were scanned.
    public var filesScanned: Int
    /// Files of cohort's own making that were not scanned (relative paths), see
    /// ``ResidualScanner/isFixedText(_:)``.
    public var filesSkipped: [String]
    /// Every finding, in file and line order.
    public var findings: [ResidualFinding]
    /// Values of free-text fields (``ResidualScanner/freeTextColumns``,
    /// ``ResidualScanner/isFreeTextJSONPath(_:)``) checked against the allow-list (not encoded:
    /// the result's JSON is unchanged).
    public var freeTextValues = 0
    /// Values checked for roster forms: every CSV cell, JSON string that is not fixed vocabulary,
    /// and line of another text file (not encoded either).
    public var valuesScanned = 0
    /// Of `filesScanned`, how many were scanned from the bytes their writer wrote, as it wrote
    /// them (``WrittenFileScan``), not read back (not encoded either).
    public var filesScannedAsWritten = 0

    /// A result over `filesScanned` files.
    package init(filesScanned: Int, filesSkipped: [String] = [], findings: [ResidualFinding], freeTextValues: Int = 0, valuesScanned: Int = 0) {
        self.filesScanned = filesScanned
        self.filesSkipped = filesSkipped
        self.findings = findings
        self.freeTextValues = freeTextValues
        self.valuesScanned = valuesScanned
    }

    /// One family of rules, what it checked and what it found.
    public struct RuleCount: Sendable, Hashable, Codable {
        /// `roster forms` or `unknown tokens`.
        public var rule: String
        /// Which values the rule applies to.
        public var scope: String
        package var valuesChecked: Int
        public var findings: Int
        /// `roster forms: 4210 values, 0 findings`, `unknown tokens: 1140 free-text values, 0 findings`.
        public var description: String {
            let values = "\(valuesChecked) \(rule == "unknown tokens" ? "free-text " : "")value\(valuesChecked == 1 ? "" : "s")"
            return "\(rule): \(values), \(findings) finding\(findings == 1 ? "" : "s")"
        }

        package init(rule: String, scope: String, valuesChecked: Int, findings: Int) {
            self.rule = rule
            self.scope = scope
            self.valuesChecked = valuesChecked
            self.findings = findings
        }
        enum CodingKeys: String, CodingKey {
            case rule, scope, findings
            case valuesChecked = "values_checked"
        }
    }

    /// The two rule families with the values each checked and its findings (one finding per kind
    /// and value: the roster forms' kinds are names, emails, phones, birth dates, MRNs, street
    /// lines, devices and study codes).
    public var ruleCounts: [RuleCount] {
        let unknown = findings.filter { $0.kind == .unknownToken }.count
        return [
            RuleCount(
                rule: "roster forms", scope: "every value (names and their variants, emails, phones, birth dates, MRNs, street lines, devices, study codes)",
                valuesChecked: valuesScanned, findings: findings.count - unknown),
            RuleCount(rule: "unknown tokens", scope: "free-text values (the scrubber's allow-list)", valuesChecked: freeTextValues, findings: unknown),
        ]
    }

    /// `roster forms: 4210 values, 0 findings; unknown tokens: 1140 free-text values, 0 findings`.
    public var ruleCountsSummary: String { ruleCounts.map(\.description).joined(separator: "; ") }

    /// Whether nothing was found (the only result an export may publish without exceptions).
    public var isClean: Bool { findings.isEmpty }

    /// The rules every scan applies, for "clean" to say what was checked.
    package static let rules =
        "roster forms (names and their variants, emails, phones, birth dates, MRNs, street lines, devices, study codes) in every value; "
        + "unknown tokens (the scrubber's allow-list) in free-text values"

    /// What was scanned and by which rules, with counts: "clean: 12 files, 3,400 free-text
    /// values; rules: …" (or the number of findings).
    public var summary: String {
        let outcome = isClean ? "clean" : "\(findings.count) finding\(findings.count == 1 ? "" : "s")"
        let unknown = findings.filter { $0.kind == .unknownToken }.count
        let detail = unknown > 0 ? " (\(unknown) unreviewed unknown token\(unknown == 1 ? "" : "s"))" : ""
        return "\(outcome)\(detail): \(filesScanned) file\(filesScanned == 1 ? "" : "s") scanned, \(freeTextValues) free-text value\(freeTextValues == 1 ? "" : "s") checked against the allow-list; rules: \(Self.rules)"
    }

    enum CodingKeys: String, CodingKey {
        case findings
        case filesScanned = "files_scanned"
        case filesSkipped = "files_skipped"
    }

    /// Decodes a result; results written before skipped files were listed decode too.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        filesScanned = try c.decode(Int.self, forKey: .filesScanned)
        filesSkipped = try c.decodeIfPresent([String].self, forKey: .filesSkipped) ?? []
        findings = try c.decode([ResidualFinding].self, forKey: .findings)
    }
}
