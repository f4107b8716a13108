import Foundation
import CohortCore

/// POSIX file operations for key material: created 0600, written atomically, and refused when
/// others could read them.
enum SecureFile {
    /// Writes `bytes` to `path` with mode 0600 from the first instant.
    ///
    /// The bytes go to a fresh temporary file in the same directory (`O_CREAT | O_EXCL`, mode
    /// 0600), are synced, and the file is then moved into place: with `rename` when replacing,
    /// with `link` (which fails if `path` exists) otherwise, so an existing key is never clobbered.
    static func write(_ bytes: [UInt8], to path: String, replacing: Bool) throws {
        let temporary = path + ".tmp-" + UUID().uuidString
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw posixError("cannot create key file", path: temporary) }
        var removeTemporary = true
        defer { if removeTemporary { unlink(temporary) } }
        do {
            defer { close(descriptor) }
            // The umask can only remove bits, but be explicit.
            guard fchmod(descriptor, 0o600) == 0 else { throw posixError("cannot set key file mode", path: temporary) }
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { buffer in
                    Foundation.write(descriptor, buffer.baseAddress.map { $0 + offset }, bytes.count - offset)
                }
                if written < 0 {
                    if errno == EINTR { continue }
                    throw posixError("cannot write key file", path: temporary)
                }
                offset += written
            }
            guard fsync(descriptor) == 0 else { throw posixError("cannot sync key file", path: temporary) }
        }
        if replacing {
            guard rename(temporary, path) == 0 else { throw posixError("cannot move key file into place", path: path) }
            removeTemporary = false
        } else {
            guard link(temporary, path) == 0 else {
                if errno == EEXIST {
                    throw CohortError(.conflict, "a key file already exists", at: CohortError.Location(file: path))
                }
                throw posixError("cannot move key file into place", path: path)
            }
        }
    }

    /// Flushes directory entries (the renames) to disk.
    static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw posixError("cannot open the keystore directory", path: path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw posixError("cannot sync the keystore directory", path: path) }
    }

    /// Reads a key file, refusing it unless it is a regular file that only its owner can access.
    ///
    /// The mode is checked on the open descriptor (`fstat`), so the file checked is the file read.
    static func readPrivate(_ path: String) throws -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            if errno == ENOENT {
                throw CohortError(
                    .notFound, "key file is missing", at: CohortError.Location(file: path), hint: "run `cohort keys init`")
            }
            if errno == ELOOP {
                throw CohortError(
                    .security, "key file is a symbolic link", at: CohortError.Location(file: path),
                    hint: "replace the link with the key file itself")
            }
            throw posixError("cannot open key file", path: path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw posixError("cannot inspect key file", path: path) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw CohortError(.security, "key file is not a regular file", at: CohortError.Location(file: path))
        }
        guard info.st_mode & 0o077 == 0 else {
            throw CohortError(
                .security, "key file is accessible to group or others", at: CohortError.Location(file: path),
                hint: "chmod 600 \(path)")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { chunk.withUnsafeMutableBytes { buffer in _ = buffer.initializeMemory(as: UInt8.self, repeating: 0) } }
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw posixError("cannot read key file", path: path)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    static func posixError(_ message: String, path: String) -> CohortError {
        CohortError(.system, message, at: CohortError.Location(file: path), underlying: String(cString: strerror(errno)))
    }
}
