public import Foundation

/// A written archive: where it is, and the SHA-256 and size of its compressed bytes.
public struct ArchiveResult: Sendable, Hashable, Codable {
    /// The archive's final location.
    public var url: URL
    /// Lowercase hex SHA-256 of the `.tar.gz` file.
    public var sha256: String
    /// Size of the `.tar.gz` file in bytes.
    public var size: UInt64
    /// The `.p7m` the archive was encrypted to (`cohort export --encrypt-to`), when it was.
    public var encrypted: ExportManifest.Encrypted?

    /// The archive's file name, e.g. `ra-flare-20250314T083000Z.tar.gz`.
    public var fileName: String { url.lastPathComponent }

    /// A result as given.
    public init(url: URL, sha256: String, size: UInt64) {
        self.url = url
        self.sha256 = sha256
        self.size = size
    }
}
