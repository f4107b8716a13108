package import CohortCore
import Foundation
import SystemPackage

/// The few POSIX file-system operations the package writer and verifier need, with errors that
/// name the path (never file contents).
package enum FileSystem {
    /// What a directory entry is, from `lstat` (symbolic links are not followed).
    package enum Kind {
        case regular(size: UInt64)
        case directory
        case other
    }

    package static func kind(of path: String) throws -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { throw error("cannot inspect file", path: path) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regular(size: UInt64(info.st_size))
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    package static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// The names in a directory, sorted by their UTF-8 bytes (so the order is locale-free).
    package static func children(of path: String) throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        } catch {
            throw CohortError(.system, "cannot list directory", at: CohortError.Location(file: path))
        }
    }

    /// Flushes directory entries (renames) to disk.
    package static func syncDirectory(_ path: String) throws {
        let descriptor = try open(path, .readOnly, options: [.directory, .closeOnExec], "cannot open directory")
        defer { try? descriptor.close() }
        guard fsync(descriptor.rawValue) == 0 else { throw error("cannot sync directory", path: path) }
    }

    /// Writes small `bytes` to `path` (replacing it) and syncs it.
    package static func writeSmallFile(_ bytes: [UInt8], to path: String) throws {
        let descriptor = try open(
            path, .writeOnly, options: [.create, .truncate, .closeOnExec], permissions: FilePermissions(rawValue: 0o644), "cannot create file")
        defer { try? descriptor.close() }
        try bytes.withUnsafeBytes { try write($0, to: descriptor, path: path) }
        guard fsync(descriptor.rawValue) == 0 else { throw error("cannot sync file", path: path) }
    }

    /// Opens `path` through swift-system; a failure becomes a `CohortError` naming the path
    /// (`notFound` when it does not exist).
    static func open(
        _ path: String, _ mode: FileDescriptor.AccessMode, options: FileDescriptor.OpenOptions, permissions: FilePermissions? = nil,
        _ message: String
    ) throws -> FileDescriptor {
        do {
            return try FileDescriptor.open(FilePath(path), mode, options: options, permissions: permissions)
        } catch {
            throw Self.error(message, path: path, error)
        }
    }

    /// Writes all of `buffer` to `descriptor` (retrying short and interrupted writes).
    static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: FileDescriptor, path: String) throws {
        do {
            _ = try descriptor.writeAll(buffer)
        } catch {
            throw Self.error("cannot write file", path: path, error)
        }
    }

    /// Writes all of `buffer` to the raw descriptor `descriptor` (one the caller opened itself).
    package static func write(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws {
        try write(buffer, to: FileDescriptor(rawValue: descriptor), path: path)
    }

    /// A `CohortError` for a failed system call on `path`, from swift-system's error.
    static func error(_ message: String, path: String, _ error: any Error) -> CohortError {
        CohortError(
            error as? Errno == .noSuchFileOrDirectory ? .notFound : .system, message, at: CohortError.Location(file: path),
            underlying: "\(error)")
    }

    package static func error(_ message: String, path: String) -> CohortError {
        let code = errno
        return CohortError(
            code == ENOENT ? .notFound : .system, message, at: CohortError.Location(file: path),
            underlying: String(cString: strerror(code)))
    }
}
