/// One line of a verification report: a named check, whether it passed, and what was found.
///
/// Details name files and digests, never record values.
public struct VerificationCheck: Sendable, Hashable, Codable {
    /// The check's name, e.g. `signature` or `archive digest` (see the static names).
    public var name: String
    /// Whether it passed.
    public var passed: Bool
    /// What was found: the evidence on success, the discrepancy on failure.
    public var detail: String

    /// A check result as given.
    public init(name: String, passed: Bool, detail: String) {
        self.name = name
        self.passed = passed
        self.detail = detail
    }

    /// `✔ name  detail` or `✘ name  detail`.
    public var line: String {
        (passed ? "✔ " : "✘ ") + name + (detail.isEmpty ? "" : "  " + detail)
    }

    /// The Ed25519 signature over the manifest bytes.
    public static let signature = "signature"
    /// The manifest's signer fingerprint is the verifying key's.
    public static let signerKey = "signer key"
    /// The manifest parses and has the expected format.
    public static let manifestFormat = "manifest format"
    /// Archive size matches the manifest.
    public static let archiveSize = "archive size"
    /// Archive SHA-256 matches the manifest.
    public static let archiveDigest = "archive digest"
    /// Gzip stream decompresses with correct CRC-32 and length.
    public static let gzipIntegrity = "gzip integrity"
    /// Tar headers, sizes, end marker; a single top-level bag folder; safe paths.
    public static let tarStructure = "tar structure"
    /// `bagit.txt` present and declares BagIt.
    public static let bagDeclaration = "bagit.txt"
    /// `manifest-sha256.txt` matches every payload file, none missing or extra.
    public static let bagManifest = "bag manifest"
    /// `tagmanifest-sha256.txt` matches the tag files.
    public static let tagManifest = "tag manifest"
    /// `Payload-Oxum` in `bag-info.txt` matches the payload.
    public static let payloadOxum = "payload oxum"
    /// Every file in the signed manifest is in the archive with that digest, size and row count.
    public static let signedFiles = "signed files"
    /// No file in the archive is missing from the signed manifest.
    public static let unlistedFiles = "unlisted files"
    /// The manifest's audit checkpoint carries a valid signature by the key.
    public static let auditCheckpoint = "audit checkpoint"
}
