public import CohortCore
import CohortCrypto
import Foundation

/// One file of a delivery: its name on the server, where it is here, and what it must hash to.
public struct DeliveryFile: Sendable, Hashable {
    public var name: String
    public var localPath: String
    public var sha256: String
    public var size: UInt64

    public init(name: String, localPath: String, sha256: String, size: UInt64) {
        self.name = name
        self.localPath = localPath
        self.sha256 = sha256
        self.size = size
    }
}

/// What a finished delivery did.
public struct DeliveryResult: Sendable {
    public var destination: SFTPDestination
    /// The folder the files are in on the server (absolute).
    public var remoteFolder: String
    /// The server's host key, as OpenSSH prints it (`SHA256:…`), matched against the pinned file.
    public var hostKeyFingerprint: String
    /// Bytes sent in this run (less than the files' sizes when a partial upload was resumed).
    public var bytesSent: UInt64
    /// The files' total size.
    public var bytes: UInt64
    /// Files whose partial upload from an earlier, interrupted delivery was resumed.
    public var resumed: [String]
    /// Files that were already on the server with the same SHA-256 (nothing sent).
    public var alreadyThere: [String]
}

/// Why a delivery failed, as `export.delivery_failed` records it.
public struct DeliveryFailure: Error, Sendable {
    public enum Reason: String, Sendable {
        case unknownHostKey = "unknown host key"
        case changedHostKey = "changed host key"
        case authentication
        case network
        case readBackMismatch = "read-back mismatch"
        case conflict = "different file already at the destination"
        case server = "server refused"
    }

    public var reason: Reason
    /// The host key the server showed, when the connection got that far.
    public var hostKeyFingerprint: String?
    /// The error to report (never a credential, never file contents).
    public var error: CohortError
}

/// Uploads an export's files over SFTP, all or nothing as far as final names go.
///
/// 1. Connection one (``SSHConnection``: pinned host key, key authentication): the folder is
///    created when missing; each file goes to `.NAME.cohort-partial` — resumed when a partial
///    from an interrupted delivery is a prefix of the file (its bytes read back and hashed),
///    restarted otherwise. A final name that already holds the same bytes is left as it is;
///    one that holds different bytes refuses the delivery.
/// 2. Connection two, a fresh session: every partial file is read back from the server and its
///    SHA-256 compared with the local file's; a mismatch removes it and fails the delivery.
///    Then the partials are renamed to their final names, in the order given (the manifest
///    should be last, so its presence tells the recipient the delivery is complete).
public enum SFTPDelivery {
    /// The temporary name of `name` during upload.
    public static func partialName(_ name: String) -> String { "." + name + ".cohort-partial" }

    public static func deliver(
        _ files: [DeliveryFile], to destination: SFTPDestination, knownHosts: String, identity: String?, connectTimeout: Int = 15,
        progress: (_ sent: UInt64, _ total: UInt64) -> Void = { _, _ in }
    ) throws(DeliveryFailure) -> DeliveryResult {
        let logs = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-deliver-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(at: logs, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw DeliveryFailure(reason: .network, error: CohortError(.system, "could not create a private temporary folder", underlying: "\(error)"))
        }
        defer { try? FileManager.default.removeItem(at: logs) }
        var fingerprint: String?
        var connection: SSHConnection?
        func failing(_ error: any Error, _ reason: DeliveryFailure.Reason? = nil) -> DeliveryFailure {
            if let failure = error as? DeliveryFailure { return failure }
            connection?.abort()
            let seen = connection?.hostKeyFingerprint ?? fingerprint
            if let sftp = error as? SFTPError {
                return DeliveryFailure(reason: reason ?? .server, hostKeyFingerprint: seen, error: CohortError(.system, sftp.description, hint: "check the folder's permissions on the server"))
            }
            let classified = reason ?? Self.reason(connection?.failure() ?? .network)
            let message: String
            let code: CohortError.Code
            switch classified {
            case .unknownHostKey:
                (code, message) = (.security, "the server's host key \(seen ?? "(not shown)") is not in the pinned known-hosts file; nothing was sent")
            case .changedHostKey:
                (code, message) = (.security, "the server's host key \(seen ?? "(not shown)") differs from the pinned one; nothing was sent")
            case .authentication:
                (code, message) = (.security, "the server refused the key (authentication failed)")
            default:
                (code, message) = (.system, "the connection to \(destination.host) failed" + (connection.map { " (\($0.reason()))" } ?? ""))
            }
            let hint = switch classified {
            case .unknownHostKey, .changedHostKey: "check the fingerprint with the server's administrator, then add its key to the known-hosts file (ssh-keyscan -p PORT HOST)"
            case .authentication: "give --identity KEY with a key the server accepts for this user"
            default: "check the host, port and network, then run cohort deliver again (a partial upload resumes)"
            }
            return DeliveryFailure(reason: classified, hostKeyFingerprint: seen, error: CohortError(code, message, hint: hint))
        }
        let total = files.reduce(0) { $0 + $1.size }
        var sent: UInt64 = 0
        var done: UInt64 = 0
        var resumed: [String] = []
        var already: [String] = []
        var folder = destination.path
        do {
            // Connection one: upload to temporary names.
            let first = try SSHConnection(destination: destination, knownHosts: knownHosts, identity: identity, connectTimeout: connectTimeout, logDirectory: logs)
            connection = first
            let session = try SFTPSession(connection: first)
            fingerprint = first.hostKeyFingerprint
            if destination.fromHome {
                let home = try session.realpath(".")
                folder = destination.path.isEmpty ? home : (home == "/" ? "" : home) + "/" + destination.path
            }
            try session.makeDirectories(folder)
            for file in files {
                let final = folder + "/" + file.name
                if let size = try session.size(final) {
                    let remote = try session.sha256(of: final)
                    guard size == file.size, remote.sha256 == file.sha256 else {
                        throw DeliveryFailure(
                            reason: .conflict, hostKeyFingerprint: fingerprint,
                            error: CohortError(.conflict, "\(final) already exists on the server with different content", hint: "deliver to another folder, or ask the recipient to move the old file"))
                    }
                    already.append(file.name)
                    done += file.size
                    progress(done, total)
                    continue
                }
                let partial = folder + "/" + partialName(file.name)
                var offset: UInt64 = 0
                if let size = try session.size(partial) {
                    if size > 0, size <= file.size, try session.sha256(of: partial, length: size).sha256 == (try SHA256Hasher.digest(ofFile: file.localPath, length: size).sha256) {
                        offset = size
                        resumed.append(file.name)
                    } else {
                        try session.remove(partial)
                    }
                }
                done += offset
                progress(done, total)
                try session.upload(local: file.localPath, remote: partial, from: offset) { bytes in
                    sent += bytes
                    done += bytes
                    progress(done, total)
                }
            }
            try first.finish()
            connection = nil

            // Connection two: read everything back, then give the files their final names.
            let second = try SSHConnection(destination: destination, knownHosts: knownHosts, identity: identity, connectTimeout: connectTimeout, logDirectory: logs)
            connection = second
            let check = try SFTPSession(connection: second)
            let waiting = files.filter { !already.contains($0.name) }
            for file in waiting {
                let partial = folder + "/" + partialName(file.name)
                let remote = try check.sha256(of: partial)
                guard remote.size == file.size, remote.sha256 == file.sha256 else {
                    // Nothing of a delivery that failed its read-back is left to be trusted.
                    for other in waiting { try? check.remove(folder + "/" + partialName(other.name)) }
                    throw DeliveryFailure(
                        reason: .readBackMismatch, hostKeyFingerprint: second.hostKeyFingerprint ?? fingerprint,
                        error: CohortError(
                            .integrity, "\(file.name) read back from the server does not match what was sent (SHA-256 \(remote.sha256.prefix(16))…, \(remote.size) bytes; sent \(file.sha256.prefix(16))…, \(file.size) bytes); the upload was removed",
                            hint: "run cohort deliver again; if it happens again, the server or the path to it alters files"))
                }
            }
            for file in waiting {
                try check.rename(folder + "/" + partialName(file.name), to: folder + "/" + file.name)
            }
            let seen = second.hostKeyFingerprint ?? fingerprint ?? ""
            try second.finish()
            connection = nil
            return DeliveryResult(
                destination: destination, remoteFolder: folder, hostKeyFingerprint: seen, bytesSent: sent, bytes: total, resumed: resumed,
                alreadyThere: already)
        } catch {
            throw failing(error)
        }
    }

    private static func reason(_ failure: SSHConnection.Failure) -> DeliveryFailure.Reason {
        switch failure {
        case .unknownHostKey: .unknownHostKey
        case .changedHostKey: .changedHostKey
        case .authentication: .authentication
        case .network: .network
        }
    }
}
