import CohortCore
import Foundation

/// A report file an export writes piece by piece (`data/reports/compliance.json`): pieces are
/// gathered into 64 KiB writes, so a report of any size never sits whole in memory.
///
/// Errors name the file by its path relative to the bag root.
final class ReportFile {
    private let handle: FileHandle
    private let relativePath: String
    private var pending = Data()
    private var closed = false
    private static let capacity = 64 * 1024

    /// Creates (or truncates) the file at `url`.
    init(url: URL, relativePath: String) throws {
        self.relativePath = relativePath
        guard FileManager.default.createFile(atPath: url.path, contents: nil), let handle = try? FileHandle(forWritingTo: url) else {
            throw CohortError(.system, "cannot create export file", at: .init(file: relativePath), hint: "check that the export directory is writable")
        }
        self.handle = handle
        pending.reserveCapacity(Self.capacity)
    }

    deinit {
        if !closed { try? handle.close() }
    }

    /// Appends `data`.
    func write(_ data: Data) throws {
        pending.append(data)
        if pending.count >= Self.capacity { try flush() }
    }

    /// Writes what is pending and closes the file.
    func close() throws {
        try flush()
        closed = true
        do {
            try handle.close()
        } catch {
            throw CohortError(.system, "cannot close export file", at: .init(file: relativePath), underlying: (error as NSError).localizedDescription)
        }
    }

    private func flush() throws {
        guard !pending.isEmpty else { return }
        do {
            try handle.write(contentsOf: pending)
        } catch {
            throw CohortError(
                .system, "cannot write export file", at: .init(file: relativePath), hint: "check free disk space",
                underlying: (error as NSError).localizedDescription)
        }
        pending.removeAll(keepingCapacity: true)
    }
}
