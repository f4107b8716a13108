import Foundation
import CohortCore

/// Owns a file descriptor opened for reading; closes it in `deinit`.
final class InputFile {
    private let descriptor: Int32

    init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw CohortError(
                code == ENOENT ? .notFound : .system, "cannot open file", at: CohortError.Location(file: path),
                underlying: String(cString: strerror(code)))
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        while true {
            let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            throw CohortError(.system, "cannot read file", underlying: String(cString: strerror(errno)))
        }
    }
}
