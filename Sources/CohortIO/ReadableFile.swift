import CohortCore
import Foundation
import SystemPackage

/// Owns a file descriptor opened for reading; closes it in `deinit`.
///
/// Reads go straight to `read(2)` so callers stream files in fixed-size chunks and never hold a
/// whole file in memory.
package final class ReadableFile {
    private let descriptor: FileDescriptor
    package let path: String

    /// Opens `path` for reading.
    ///
    /// - Throws: `.notFound` when the file does not exist; `.system` when it cannot be opened.
    package init(path: String) throws {
        do {
            descriptor = try FileDescriptor.open(FilePath(path), .readOnly, options: [.closeOnExec])
        } catch {
            throw CohortError(
                error as? Errno == .noSuchFileOrDirectory ? .notFound : .system, "cannot open file", at: CohortError.Location(file: path),
                underlying: "\(error)")
        }
        self.path = path
    }

    deinit {
        try? descriptor.close()
    }

    /// Reads up to `buffer.count` bytes; 0 means end of file.
    package func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        guard buffer.count > 0 else { return 0 }
        do {
            return try descriptor.read(into: buffer)  // retries when interrupted
        } catch {
            throw CohortError(
                error as? Errno == .noSuchFileOrDirectory ? .notFound : .system, "cannot read file", at: CohortError.Location(file: path),
                underlying: "\(error)")
        }
    }

    /// Fills `buffer` completely unless the file ends first; returns the count read.
    package func readFully(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        var total = 0
        while total < buffer.count {
            let count = try read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[total...]))
            if count == 0 { break }
            total += count
        }
        return total
    }

    /// Calls `body` with consecutive chunks of at most `chunkSize` bytes until the end of file.
    package func forEachChunk(chunkSize: Int = 64 * 1024, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        while true {
            let count = try read(into: buffer)
            if count == 0 { return }
            try body(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
        }
    }
}
