public import Foundation
import CohortCore
import CohortIO

/// The study's keys, kept as files in one directory (mode 0700, every file mode 0600).
///
/// | File | Contents |
/// |---|---|
/// | `study.secret` | 32 random bytes (raw): pseudonyms and date shifts derive from it |
/// | `pii.key` | 32 random bytes (raw): AES-256-GCM key for direct identifiers at rest |
/// | `signing.pem` | Ed25519 private key, PKCS#8 PEM |
/// | `signing.pub.pem` | Ed25519 public key, SPKI PEM (share it by copying) |
///
/// ``load(from:)`` refuses any key file that group or others may access, and a public key file
/// that does not match the private key. Files are created already 0600 and renamed into place,
/// so a key is never readable by others, even briefly. No secret appears in this type's
/// `description`, in its errors, or in ``fingerprints``.
public struct Keystore: Sendable, CustomStringConvertible, CustomReflectable {
    /// File name of the study secret.
    public static let studySecretFileName = "study.secret"
    /// File name of the identifier-encryption key.
    public static let piiKeyFileName = "pii.key"
    /// File name of the Ed25519 private key.
    public static let signingKeyFileName = "signing.pem"
    /// File name of the Ed25519 public key.
    public static let publicKeyFileName = "signing.pub.pem"
    /// All four key files, in the order they are written.
    public static let fileNames = [studySecretFileName, piiKeyFileName, signingKeyFileName, publicKeyFileName]

    /// Length of `study.secret` and `pii.key` in bytes.
    public static let secretByteCount = 32

    /// The 32-byte study secret (keep secret).
    public let studySecret: [UInt8]
    /// The 32-byte AES-256-GCM key for direct identifiers (keep secret).
    public let piiKey: [UInt8]
    /// The Ed25519 key that signs audit checkpoints, manifests, and receipts.
    public let signingKey: Ed25519PrivateKey

    /// The public half of ``signingKey``.
    public var publicKey: Ed25519PublicKey { signingKey.publicKey }

    /// A keystore held in memory, e.g. with fixed keys for tests.
    ///
    /// - Throws: `.invalidInput` when a secret is not 32 bytes.
    public init(studySecret: [UInt8], piiKey: [UInt8], signingKey: Ed25519PrivateKey) throws {
        guard studySecret.count == Self.secretByteCount, piiKey.count == Self.secretByteCount else {
            throw CohortError(.invalidInput, "keystore secrets must be \(Self.secretByteCount) bytes")
        }
        self.studySecret = studySecret
        self.piiKey = piiKey
        self.signingKey = signingKey
    }

    /// Fingerprints of the three keys, safe to show and record.
    public var fingerprints: KeyFingerprints {
        KeyFingerprints(
            studySecret: KeyFingerprints.secret(studySecret, label: "cohort/fingerprint/study.secret/v1\u{0}"),
            piiKey: KeyFingerprints.secret(piiKey, label: "cohort/fingerprint/pii.key/v1\u{0}"),
            signing: publicKey.fingerprint)
    }

    /// The 32-byte key for exports to `recipient`:
    /// HKDF-SHA256(ikm: study secret, salt: `cohort/recipient/v1`, info: recipient UTF-8).
    ///
    /// Pseudonyms differ between recipients; the same recipient always gets the same key, hence
    /// stable pseudonyms across exports. Record values still link a participant's rows across
    /// recipients: exports are not unlinkable. Date shifts do not derive from this key (see
    /// ``dateShiftKey()``).
    ///
    /// - Throws: `.invalidInput` when `recipient` is empty.
    public func recipientKey(for recipient: String) throws -> [UInt8] {
        guard !recipient.isEmpty else {
            throw CohortError(.invalidInput, "export recipient is empty", hint: "name the recipient, e.g. --recipient analysts")
        }
        return try HKDF.deriveKey(
            inputKeyMaterial: studySecret, salt: Array("cohort/recipient/v1".utf8), info: Array(recipient.utf8),
            outputByteCount: 32)
    }

    /// The 32-byte key every date shift derives from:
    /// HKDF-SHA256(ikm: study secret, salt: `cohort/date-shift/v1`, info: empty).
    ///
    /// One shift per participant for every recipient: were shifts per recipient, two recipients
    /// who compare (record values link their rows) would learn each shift's difference.
    public func dateShiftKey() throws -> [UInt8] {
        try HKDF.deriveKey(inputKeyMaterial: studySecret, salt: Array("cohort/date-shift/v1".utf8), info: [], outputByteCount: 32)
    }

    /// Shows fingerprints only.
    public var description: String {
        let prints = fingerprints
        return "Keystore(studySecret: \(prints.studySecret), piiKey: \(prints.piiKey), signing: \(prints.signing))"
    }

    /// Redacted for `dump` and debuggers: fingerprints only.
    public var customMirror: Mirror {
        Mirror(self, children: ["fingerprints": fingerprints], displayStyle: .struct)
    }

    // MARK: - Files

    /// Generates new keys and writes them into `directory`.
    ///
    /// Creates the directory (mode 0700) when missing. Each file is written to a temporary name
    /// created with mode 0600, synced, and then moved into place.
    ///
    /// - Parameter overwrite: replace existing key files. Without it, any existing key file is a
    ///   `.conflict` error and nothing is written.
    /// - Throws: `.conflict`, or `.system` for file-system failures.
    @discardableResult
    public static func create(at directory: URL, overwrite: Bool = false) throws -> Keystore {
        try createDirectory(directory)
        if !overwrite {
            for name in fileNames {
                let path = directory.appendingPathComponent(name).path
                var info = stat()
                if lstat(path, &info) == 0 {
                    throw CohortError(
                        .conflict, "a key file already exists", at: CohortError.Location(file: path),
                        hint: "keep the existing keys, or pass --force to replace them (data encrypted or pseudonymized under the old keys is lost)")
                }
            }
        }
        let keystore = try Keystore(
            studySecret: SecureRandom.bytes(secretByteCount), piiKey: SecureRandom.bytes(secretByteCount),
            signingKey: Ed25519PrivateKey.generate())
        try keystore.write(to: directory, overwrite: overwrite)
        return keystore
    }

    /// Writes these keys into `directory`, which must not hold key files (unless `overwrite`):
    /// e.g. a site coordinator's keystore with the study's secrets and the site's own signing key
    /// (`cohort site invite`). Same file modes and order as ``create(at:overwrite:)``.
    public func write(to directory: URL, overwrite: Bool = false) throws {
        try Self.createDirectory(directory)
        let keystore = self
        let contents: [(String, [UInt8])] = [
            (Self.studySecretFileName, keystore.studySecret),
            (Self.piiKeyFileName, keystore.piiKey),
            (Self.signingKeyFileName, Array(keystore.signingKey.pemRepresentation.utf8)),
            (Self.publicKeyFileName, Array(keystore.publicKey.pemRepresentation.utf8)),
        ]
        for (name, bytes) in contents {
            try SecureFile.write(bytes, to: directory.appendingPathComponent(name).path, replacing: overwrite)
        }
        try SecureFile.syncDirectory(directory.path)
    }

    /// Reads the keystore in `directory`.
    ///
    /// - Throws: `.notFound` when the directory or a key file is missing; `.security` when the
    ///   directory is a symbolic link, not a directory, or open to group or others (it must be a
    ///   real 0700 directory), when a key file is accessible to group or others or is not a regular
    ///   file, or when the public key does not match the private key; `.invalidInput` when a
    ///   file's contents are malformed.
    public static func load(from directory: URL) throws -> Keystore {
        try checkDirectory(directory)
        func read(_ name: String) throws -> (path: String, bytes: [UInt8]) {
            let path = directory.appendingPathComponent(name).path
            return (path, try SecureFile.readPrivate(path))
        }
        let secret = try read(studySecretFileName)
        let pii = try read(piiKeyFileName)
        let signing = try read(signingKeyFileName)
        let pub = try read(publicKeyFileName)
        for (path, bytes) in [secret, pii] where bytes.count != secretByteCount {
            throw CohortError(
                .invalidInput, "key file must hold exactly \(secretByteCount) bytes", at: CohortError.Location(file: path),
                hint: "restore the keystore from its backup")
        }
        let signingKey: Ed25519PrivateKey
        do {
            signingKey = try Ed25519PrivateKey(pemRepresentation: String(decoding: signing.bytes, as: UTF8.self))
        } catch var error as CohortError {
            error.location = CohortError.Location(file: signing.path)
            throw error
        }
        let publicKey: Ed25519PublicKey
        do {
            publicKey = try Ed25519PublicKey(pemRepresentation: String(decoding: pub.bytes, as: UTF8.self))
        } catch var error as CohortError {
            error.location = CohortError.Location(file: pub.path)
            throw error
        }
        guard publicKey == signingKey.publicKey else {
            throw CohortError(
                .security, "public key does not match the signing key", at: CohortError.Location(file: pub.path),
                hint: "restore the keystore from its backup; do not mix key files from different keystores")
        }
        return try Keystore(studySecret: secret.bytes, piiKey: pii.bytes, signingKey: signingKey)
    }

    /// Refuses a keystore directory that is a symbolic link, not a directory, or open to group or
    /// others. A link could point the study at keys someone else controls (or share them with
    /// another study); a 0755 folder lets every account list, and after one careless `chmod` read,
    /// the keys.
    static func checkDirectory(_ directory: URL) throws {
        let path = Self.plainPath(directory)
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT {
                throw CohortError(
                    .notFound, "the keystore folder is missing", at: CohortError.Location(file: path),
                    hint: "restore the original keys/ folder from its backup, or run `cohort keys init` for a new study")
            }
            throw SecureFile.posixError("cannot inspect the keystore folder", path: path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFDIR:
            break
        case S_IFLNK:
            throw CohortError(
                .security, "the keystore folder is a symbolic link; it must be a real directory", at: CohortError.Location(file: path),
                hint: "replace the link with the folder itself (rm \(path) && cp -a <original keys folder> \(path)), then chmod 700 \(path)")
        default:
            throw CohortError(
                .security, "the keystore path is not a directory", at: CohortError.Location(file: path),
                hint: "restore the original keys/ folder from its backup")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw CohortError(
                .security, "the keystore folder is accessible to group or others (mode \(String(info.st_mode & 0o777, radix: 8)))",
                at: CohortError.Location(file: path), hint: "chmod 700 \(path)")
        }
    }

    /// The path without trailing slashes, so `lstat` looks at the last component itself rather
    /// than at what a link there points to.
    private static func plainPath(_ directory: URL) -> String {
        var path = directory.path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        return path
    }

    private static func createDirectory(_ directory: URL) throws {
        let path = Self.plainPath(directory)
        var info = stat()
        if lstat(path, &info) == 0 {
            guard (info.st_mode & S_IFMT) != S_IFLNK else {
                throw CohortError(
                    .security, "the keystore folder is a symbolic link; it must be a real directory", at: CohortError.Location(file: path),
                    hint: "remove the link and create the keystore in a real folder")
            }
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw CohortError(.conflict, "keystore path exists and is not a directory", at: CohortError.Location(file: path))
            }
            // An existing folder that receives keys is closed to group and others first.
            guard info.st_mode & 0o077 == 0 || chmod(path, 0o700) == 0 else {
                throw SecureFile.posixError("cannot make the keystore folder private (chmod 700)", path: path)
            }
            return
        }
        // Parents are ordinary directories; only the keystore itself is 0700.
        let parent = directory.deletingLastPathComponent()
        do {
            try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        } catch {
            throw CohortError(
                .system, "cannot create the keystore's parent directory", at: CohortError.Location(file: parent.path),
                underlying: error.localizedDescription)
        }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
            throw SecureFile.posixError("cannot create the keystore directory", path: path)
        }
    }
}
