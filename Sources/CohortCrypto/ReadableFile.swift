import CohortCore
import Foundation

/// Owns a file descriptor opened for reading; closes it in `deinit`.
///
/// Reads go straight to `read(2)` so callers stream files in fixed-size chunks and never hold a
/// whole file in memory.
public final class ReadableFile {
    private let descriptor: Int32
    public let path: String

    /// Opens `path` for reading.
    ///
    /// - Throws: `.notFound` when the file does not exist; `.system` when it cannot be opened.
    public init(path: String) throws {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw CohortError(
                code == ENOENT ? .notFound : .system, "cannot open file", at: CohortError.Location(file: path),
                underlying: String(cString: strerror(code)))
        }
        self.descriptor = descriptor
        self.path = path
    }

    deinit {
        close(descriptor)
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        while true {
            let count = Foundation.read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            if errno == EINTR { continue }
            let code = errno
            throw CohortError(
                code == ENOENT ? .notFound : .system, "cannot read file", at: CohortError.Location(file: path),
                underlying: String(cString: strerror(code)))
        }
    }

    /// Fills `buffer` completely unless the file ends first; returns the count read.
    public func readFully(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var total = 0
        while total < buffer.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Calls `body` with consecutive chunks of at most `chunkSize` bytes until the end of file.
    public func forEachChunk(chunkSize: Int = 64 * 1024, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try read(into: buffer)
            if count == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }
}
