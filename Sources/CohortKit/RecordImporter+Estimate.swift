public import Foundation

extension RecordImporter {
    /// About how many rows `url` holds (its line count less a CSV header), for a progress bar's
    /// total and ETA; nil when the file cannot be read. One pass in 1 MiB chunks, nothing kept.
    public static func estimatedRows(in url: URL) -> Int? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        var lines = 0
        while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            lines += chunk.reduce(0) { $1 == 0x0A ? $0 + 1 : $0 }
        }
        return url.pathExtension.lowercased() == "csv" ? max(lines - 1, 0) : lines
    }
}
