/// One place where an output file still holds a participant identifier: file, line and kind —
/// never the value, so the finding can be shown, logged and put in a report.
public struct ResidualFinding: Sendable, Hashable, Codable, Comparable, CustomStringConvertible {
    /// The file's path (relative to the scanned directory when a directory was scanned).
    public var file: String
    /// 1-based line number.
    public var line: Int
    public var kind: IdentifierKind

    public init(file: String, line: Int, kind: IdentifierKind) {
        self.file = file
        self.line = line
        self.kind = kind
    }

    /// `data/csv/symptom_logs.csv:12: name`.
    public var description: String { "\(file):\(line): \(kind.rawValue)" }

    public static func < (lhs: ResidualFinding, rhs: ResidualFinding) -> Bool {
        (lhs.file, lhs.line, lhs.kind) < (rhs.file, rhs.line, rhs.kind)
    }
}

/// The outcome of scanning a set of files.
public struct ResidualScanResult: Sendable, Hashable, Codable {
    public var filesScanned: Int
    public var findings: [ResidualFinding]

    public init(filesScanned: Int, findings: [ResidualFinding]) {
        self.filesScanned = filesScanned
        self.findings = findings
    }

    /// Whether nothing was found (the only result an export may publish).
    public var isClean: Bool { findings.isEmpty }

    enum CodingKeys: String, CodingKey {
        case findings
        case filesScanned = "files_scanned"
    }
}
