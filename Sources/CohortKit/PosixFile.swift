import CohortCore
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
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw error("cannot open folder", path: path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw error("cannot sync folder", path: path) }
    }

    static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw error("cannot write file", path: path)
            }
            offset += written
        }
    }

    static func error(_ message: String, path: String) -> CohortError {
        CohortError(.system, message, at: .init(file: path), hint: "check free space and permissions", underlying: String(cString: strerror(errno)))
    }
}
