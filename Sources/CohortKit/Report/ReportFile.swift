import CohortCore
public import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writes a report page crash-safely: the bytes go to a partial file beside the target
/// (`.<name>.partial-<random>`, mode 0600), are flushed to disk, and only then renamed over the
/// target — a reader never sees half a report, and a failed write leaves the old one in place.
public enum ReportFile {
    /// Writes `html` to `url` atomically; errors name the file and say what to do.
    public static func write(_ html: String, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        let partial = directory.appendingPathComponent(".\(url.lastPathComponent).partial-\(UUID().uuidString.prefix(8))")
        let fd = open(partial.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CohortError(
                .system, "cannot create the report file", at: .init(file: url.path),
                hint: "check that the folder \(directory.path) exists and is writable", underlying: String(cString: strerror(errno)))
        }
        var ok = false
        defer {
            if !ok { unlink(partial.path) }
        }
        let bytes = Array(html.utf8)
        var written = 0
        while written < bytes.count {
            let n = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd)
                throw CohortError(.system, "cannot write the report file", at: .init(file: url.path), hint: "check free disk space", underlying: reason)
            }
            written += n
        }
        let synced = fsync(fd) == 0
        let closed = close(fd) == 0
        guard synced && closed else {
            throw CohortError(.system, "cannot flush the report file to disk", at: .init(file: url.path), hint: "check free disk space")
        }
        guard rename(partial.path, url.path) == 0 else {
            throw CohortError(
                .system, "cannot move the finished report into place", at: .init(file: url.path),
                hint: "check that \(url.lastPathComponent) is not a folder and the folder is writable", underlying: String(cString: strerror(errno)))
        }
        ok = true
    }
}
