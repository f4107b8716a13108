public import Foundation
import CohortCore

/// Reads a file line by line with a fixed-size buffer (memory does not grow with the file,
/// only with the longest line). `\r\n` and `\n` both end a line. Lines come as UTF-8 bytes,
/// in place in the read buffer; a file can be cut into pieces read on their own. Used by the
/// NDJSON import and the residual-PII scanner.
public enum LineReader {
    static let chunkSize = 1 << 20

    private static func open(_ url: URL) throws -> FileHandle {
        do {
            return try FileHandle(forReadingFrom: url)
        } catch {
            throw CohortError(
                .notFound, "cannot open the file", at: .init(file: url.path), hint: "check the path and permissions",
                underlying: error.localizedDescription)
        }
    }

    private static func read(_ handle: FileHandle, _ count: Int, _ url: URL) throws -> Data {
        do {
            return try handle.read(upToCount: count) ?? Data()
        } catch {
            throw CohortError(.system, "cannot read the file", at: .init(file: url.path), underlying: error.localizedDescription)
        }
    }

    /// Byte ranges covering the file, each about `size` bytes and ending just after a line end
    /// (or at the end of the file), so each can be read on its own; one range for an empty file.
    public static func pieces(of url: URL, size: Int) throws -> [Range<Int>] {
        let handle = try open(url)
        defer { try? handle.close() }
        let length: Int
        do {
            length = Int(try handle.seekToEnd())
        } catch {
            throw CohortError(.system, "cannot read the file", at: .init(file: url.path), underlying: error.localizedDescription)
        }
        var result: [Range<Int>] = []
        var start = 0
        while start < length {
            var end = start + max(size, 1)
            if end >= length {
                end = length
            } else {
                // Move `end` to just after the next line end.
                var position = end
                var found = false
                while !found, position < length {
                    try? handle.seek(toOffset: UInt64(position))
                    let data = try read(handle, 64 << 10, url)
                    if data.isEmpty { break }
                    if let newline = data.firstIndex(of: 0x0A) {
                        position += newline - data.startIndex + 1
                        found = true
                    } else {
                        position += data.count
                    }
                }
                end = min(position, length)
            }
            result.append(start..<end)
            start = end
        }
        if result.isEmpty { result.append(0..<0) }
        return result
    }

    /// Calls `body` with each line (number counted from 1 within `range`, bytes without the line
    /// end) of the bytes of `url` in `range` (the whole file when nil); returns the line count.
    /// A range must start at the beginning of a line.
    ///
    /// With `maxLineBytes`, a longer line is an error (naming the file and line, not its bytes)
    /// as soon as that many bytes have been read without a line end: input files cap their lines
    /// so a 10 MB line costs one pass over the cap, not a growing buffer.
    @discardableResult
    public static func forEachLine(
        of url: URL, in range: Range<Int>? = nil, maxLineBytes: Int = .max, _ body: (Int, UnsafeBufferPointer<UInt8>) throws -> Void
    ) throws -> Int {
        let handle = try open(url)
        defer { try? handle.close() }
        var remaining = Int.max
        if let range {
            if range.lowerBound > 0 {
                do {
                    try handle.seek(toOffset: UInt64(range.lowerBound))
                } catch {
                    throw CohortError(
                        .system, "cannot read the file", at: .init(file: url.path), underlying: error.localizedDescription)
                }
            }
            remaining = range.count
        }
        var number = 0
        func tooLong() -> CohortError {
            CohortError.invalid("the line is longer than \(maxLineBytes >> 20 > 0 ? "\(maxLineBytes >> 20) MiB" : "\(maxLineBytes) bytes")",
                file: url.path, line: number + 1, hint: "lines are limited to \(maxLineBytes >> 20 > 0 ? "\(maxLineBytes >> 20) MiB" : "\(maxLineBytes) bytes"); is a line end missing?")
        }
        func emit(_ bytes: UnsafeBufferPointer<UInt8>) throws {
            if bytes.count > maxLineBytes, !(bytes.count == maxLineBytes + 1 && bytes[bytes.count - 1] == 0x0D) { throw tooLong() }
            number += 1
            var count = bytes.count
            if count > 0, bytes[count - 1] == 0x0D { count -= 1 }
            try body(number, UnsafeBufferPointer(rebasing: bytes[0..<count]))
        }
        // `buffer[0..<filled]` holds unread bytes; the part before the last line end is handed
        // out in place, the rest moves to the front. The buffer grows only for longer lines.
        var buffer = [UInt8](repeating: 0, count: chunkSize)
        var filled = 0
        let descriptor = handle.fileDescriptor
        while remaining > 0 {
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            let want = min(buffer.count - filled, remaining)
            let got = buffer.withUnsafeMutableBytes { raw in
                Foundation.read(descriptor, raw.baseAddress.map { $0 + filled }, want)
            }
            if got < 0 {
                throw CohortError(.system, "cannot read the file", at: .init(file: url.path), underlying: "read failed")
            }
            if got == 0 { break }
            remaining -= got
            filled += got
            let consumed = try buffer.withUnsafeBufferPointer { bytes -> Int in
                guard let base = bytes.baseAddress else { return 0 }
                var start = 0
                while start < filled, let hit = memchr(base + start, 0x0A, filled - start) {
                    let newline = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) - base
                    try emit(UnsafeBufferPointer(start: base + start, count: newline - start))
                    start = newline + 1
                }
                return start
            }
            if consumed > 0 {
                buffer.withUnsafeMutableBufferPointer { bytes in
                    guard let base = bytes.baseAddress else { return }
                    memmove(base, base + consumed, filled - consumed)
                }
                filled -= consumed
            }
            // What is left is the start of a line without its end yet.
            if filled - 1 > maxLineBytes { throw tooLong() }
        }
        if filled > 0 { try buffer.withUnsafeBufferPointer { try emit(UnsafeBufferPointer(rebasing: $0[0..<filled])) } }
        return number
    }
}
