import CohortCore
import Foundation

/// The few POSIX file-system operations the package writer and verifier need, with errors that
/// name the path (never file contents).
enum FileSystem {
    /// What a directory entry is, from `lstat` (symbolic links are not followed).
    enum Kind {
        case regular(size: UInt64)
        case directory
        case other
    }

    static func kind(of path: String) throws -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw error("cannot inspect file", path: path) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular(size: UInt64(info.st_size))
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The names in a directory, sorted by their UTF-8 bytes (so the order is locale-free).
    static func children(of path: String) throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        } catch {
            throw CohortError(.system, "cannot list directory", at: CohortError.Location(file: path))
        }
    }

    /// Flushes directory entries (renames) to disk.
    static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw error("cannot open directory", path: path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw error("cannot sync directory", path: path) }
    }

    /// Writes small `bytes` to `path` (replacing it) and syncs it.
    static func writeSmallFile(_ bytes: [UInt8], to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw error("cannot create file", path: path) }
        defer { close(descriptor) }
        try bytes.withUnsafeBytes { try write($0, to: descriptor, path: path) }
        guard fsync(descriptor) == 0 else { throw error("cannot sync file", path: path) }
    }

    /// Writes every byte of `buffer` to `descriptor`, retrying short writes and `EINTR`.
    static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            let written = Foundation.write(descriptor, base + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw error("cannot write file", path: path)
            }
            offset += written
        }
    }

    /// A `.system` error for the current `errno`, located at `path`.
    static func error(_ message: String, path: String) -> CohortError {
        let code = errno
        return CohortError(
            code == ENOENT ? .notFound : .system, message, at: CohortError.Location(file: path),
            underlying: String(cString: strerror(code)))
    }
}
