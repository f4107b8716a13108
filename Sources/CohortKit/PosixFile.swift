import CohortCore
import CohortIO
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The POSIX calls the export's durable steps need, with errors that name the path only.
enum PosixFile {
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func syncDirectory(_ path: String) throws {
        try FileSystem.syncDirectory(path)
    }

    static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        try bytes.withUnsafeBytes { try FileSystem.write($0, to: descriptor, path: path) }
    }

    static func error(_ message: String, path: String) -> CohortError {
        CohortError(.system, message, at: .init(file: path), hint: "check free space and permissions", underlying: String(cString: strerror(errno)))
    }
}
