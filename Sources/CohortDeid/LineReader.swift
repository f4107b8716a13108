import CohortCore
import Foundation

/// Reads a file line by line with a fixed-size buffer (memory does not grow with the file,
/// only with the longest line). Lines are decoded as UTF-8 (invalid bytes replaced); `\r\n`
/// and `\n` both end a line.
enum LineReader {
    static let chunkSize = 1 << 20

    static func forEachLine(of url: URL, _ body: (Int, String) throws -> Void) throws {
        let handle: FileHandle
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw CohortError(.system, "a file to scan cannot be opened", at: .init(file: url.path), underlying: error.localizedDescription)
        }
        defer { try? handle.close() }
        var pending: [UInt8] = []
        var number = 0
        func emit(_ bytes: ArraySlice<UInt8>) throws {
            number += 1
            var slice = bytes
            if slice.last == 0x0D { slice = slice.dropLast() }
            try body(number, String(decoding: slice, as: UTF8.self))
        }
        while true {
            let data: Data
            do {
                data = try handle.read(upToCount: chunkSize) ?? Data()
            } catch {
                throw CohortError(.system, "a file to scan cannot be read", at: .init(file: url.path), underlying: error.localizedDescription)
            }
            if data.isEmpty { break }
            pending.append(contentsOf: data)
            var start = 0
            while let newline = pending[start...].firstIndex(of: 0x0A) {
                try emit(pending[start..<newline])
                start = newline + 1
            }
            pending.removeFirst(start)
        }
        if !pending.isEmpty { try emit(pending[...]) }
    }
}
