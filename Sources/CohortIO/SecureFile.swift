package import CohortCore
import Foundation
import SystemPackage

/// POSIX file operations for key material: created 0600, written atomically, and refused when
/// others could read them.
package enum SecureFile {
    /// Writes `bytes` to `path` with mode 0600 from the first instant.
    ///
    /// The bytes go to a fresh temporary file in the same directory (`O_CREAT | O_EXCL`, mode
    /// 0600), are synced, and the file is then moved into place: with `rename` when replacing,
    /// with `link` (which fails if `path` exists) otherwise, so an existing key is never clobbered.
    package static func write(_ bytes: [UInt8], to path: String, replacing: Bool) throws {
        let temporary = path + ".tmp-" + UUID().uuidString
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(
                FilePath(temporary), .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec, .noFollow], permissions: [.ownerReadWrite])
        } catch {
            throw systemError("cannot create key file", path: temporary, error)
        }
        var removeTemporary = true
        defer { if removeTemporary { unlink(temporary) } }
        do {
            defer { try? descriptor.close() }
            // The umask can only remove bits, but be explicit.
            guard fchmod(descriptor.rawValue, 0o600) == 0 else { throw posixError("cannot set key file mode", path: temporary) }
            do {
                _ = try descriptor.writeAll(bytes)
            } catch {
                throw systemError("cannot write key file", path: temporary, error)
            }
            guard fsync(descriptor.rawValue) == 0 else { throw posixError("cannot sync key file", path: temporary) }
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
    package static func syncDirectory(_ path: String) throws {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.directory, .closeOnExec])
        } catch {
            throw systemError("cannot open the keystore directory", path: path, error)
        }
        defer { try? descriptor.close() }
        guard fsync(descriptor.rawValue) == 0 else { throw posixError("cannot sync the keystore directory", path: path) }
    }

    /// Reads a key file, refusing it unless it is a regular file that only its owner can access.
    ///
    /// The mode is checked on the open descriptor (`fstat`), so the file checked is the file read.
    package static func readPrivate(_ path: String) throws -> [UInt8] {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec, .noFollow])
        } catch let error as Errno {
            if error == .noSuchFileOrDirectory {
                throw CohortError(
                    .notFound, "key file is missing", at: CohortError.Location(file: path), hint: "run `cohort keys init`")
            }
            if error == .tooManySymbolicLinkLevels {
                throw CohortError(
                    .security, "key file is a symbolic link", at: CohortError.Location(file: path),
                    hint: "replace the link with the key file itself")
            }
            throw systemError("cannot open key file", path: path, error)
        }
        defer { try? descriptor.close() }
        var info = stat()
        guard fstat(descriptor.rawValue, &info) == 0 else { throw posixError("cannot inspect key file", path: path) }
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
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            } catch {
                throw systemError("cannot read key file", path: path, error)
            }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// A `CohortError` for a failed swift-system call on `path`.
    static func systemError(_ message: String, path: String, _ error: any Error) -> CohortError {
        CohortError(.system, message, at: CohortError.Location(file: path), underlying: "\(error)")
    }

    package static func posixError(_ message: String, path: String) -> CohortError {
        CohortError(.system, message, at: CohortError.Location(file: path), underlying: String(cString: strerror(errno)))
    }
}
