/// One file an export wrote, for the bag manifest and the export summary.
public struct ExportedFile: Sendable, Hashable, Codable {
    /// The path relative to the bag root, e.g. `data/csv/biometrics.csv`.
    public var path: String
    /// Data rows (CSV), lines (NDJSON) or entries (FHIR Bundle); 0 for metadata files.
    public var rows: Int
    /// The file size in bytes.
    public var bytes: Int

    /// Describes a written file.
    public init(path: String, rows: Int, bytes: Int) {
        self.path = path
        self.rows = rows
        self.bytes = bytes
    }
}
