import CohortCore
import CohortIO
public import Foundation

/// Writes a report page crash-safely: the bytes go to a partial file beside the target
/// (`.<name>.partial-<random>`, mode 0600), are flushed to disk, and only then renamed over the
/// target, and the folder is synced (CohortIO's `PartialFile`) — a reader never sees half a
/// report, and a failed write leaves the old one in place.
public enum ReportFile {
    /// Writes `html` to `url` atomically; errors name the file and say what to do.
    public static func write(_ html: String, to url: URL) throws {
        do {
            let file = try PartialFile(finalURL: url, permissions: 0o600, replacing: true)
            try file.write(Array(html.utf8))
            try file.replace()
        } catch let error as CohortError {
            throw CohortError(
                .system, "cannot write the report file (\(error.message))", at: .init(file: url.path),
                hint: "check that the folder \(url.deletingLastPathComponent().path) exists and is writable and the disk is not full",
                underlying: error.underlying)
        }
    }
}
