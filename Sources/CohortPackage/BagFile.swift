/// One file of a bag as recorded in the bag's manifests and the export manifest.
public struct BagFile: Sendable, Hashable, Codable {
    /// Bag-relative path with `/` separators, e.g. `data/csv/symptoms.csv` or `bag-info.txt`.
    public var path: String
    /// Size in bytes.
    public var size: UInt64
    /// Lowercase hex SHA-256 of the content.
    public var sha256: String
    /// Row count by the ``RowCounter`` rule for `path`; nil for files that are not counted.
    public var rows: Int?

    /// A file record as given.
    public init(path: String, size: UInt64, sha256: String, rows: Int? = nil) {
        self.path = path
        self.size = size
        self.sha256 = sha256
        self.rows = rows
    }
}
