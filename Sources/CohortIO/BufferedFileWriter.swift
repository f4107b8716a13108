import CohortCore
package import Foundation

import SystemPackage

/// A write-only file with a 64 KiB buffer of its own, so rows (or a report, piece by piece) can be
/// written without a system call each and without ever holding a whole table in memory.
///
/// Errors name the file by its path relative to the bag root (`data/csv/biometrics.csv`).
package final class BufferedFileWriter {
    /// Bytes buffered before they are handed to the operating system.
    package static let capacity = 64 * 1024

    /// The path relative to the bag root, used in errors and in `ExportedFile`.
    package let relativePath: String
    /// Bytes written so far (buffered bytes included).
    package private(set) var bytesWritten = 0
    private var file: FileDescriptor?
    /// Open for writing (a file written to its tap alone has no `file`).
    private var isOpen = true
    /// Whether the file is written to its tap alone, with no copy on disk.
    package let isTapOnly: Bool
    /// The buffer: `capacity` bytes, of which the first `count` are pending. A raw allocation
    /// rather than an array, so appending a small slice is one bounds check and one memcpy.
    private let buffer: UnsafeMutableRawPointer
    private var count = 0
    /// Sees every byte handed to the operating system, and the file's identity at close.
    private let tap: (any FileWriteTap)?

    /// Creates (or truncates) the file at `url`; `taps` may give it a tap (see ``FileWriteTap``),
    /// and may say the file is written to its tap alone (``FileWriteTaps/withoutDiskCopy(where:)``):
    /// then nothing is created at `url`.
    package init(url: URL, relativePath: String, taps: FileWriteTaps? = nil) throws {
        self.relativePath = relativePath
        tap = taps?.tap(for: relativePath)
        isTapOnly = tap != nil && taps?.writesTapAlone(relativePath) == true
        if !isTapOnly {
            do {
                file = try FileDescriptor.open(
                    FilePath(url.path), .writeOnly, options: [.create, .truncate, .closeOnExec],
                    permissions: FilePermissions(rawValue: 0o666))  // as fopen(3): the umask decides
            } catch {
                throw Self.error("cannot create export file", relativePath, error)
            }
        }
        buffer = UnsafeMutableRawPointer.allocate(byteCount: Self.capacity, alignment: 16)
    }

    deinit {
        if let file { try? file.close() }
        buffer.deallocate()
    }

    /// Appends the UTF-8 bytes of `text`.
    package func write(_ text: String) throws {
        var text = text
        try text.withUTF8 { try write(UnsafeRawBufferPointer($0)) }
    }

    /// Appends the UTF-8 bytes of a constant.
    package func write(_ text: StaticString) throws {
        try write(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends `bytes`.
    package func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Appends `data`.
    package func write(_ data: Data) throws {
        try data.withUnsafeBytes { try write($0) }
    }

    /// Appends the bytes in `raw`.
    package func write(_ raw: UnsafeRawBufferPointer) throws {
        guard isOpen else { throw CohortError(.system, "export file written after it was closed", at: .init(file: relativePath)) }
        bytesWritten += raw.count
        if count + raw.count > Self.capacity { try flush() }
        if raw.count >= Self.capacity {
            try put(raw)
        } else if let base = raw.baseAddress {
            (buffer + count).copyMemory(from: base, byteCount: raw.count)
            count += raw.count
        }
    }

    /// Hands the buffered bytes to the operating system.
    package func flush() throws {
        guard count > 0 else { return }
        try put(UnsafeRawBufferPointer(start: buffer, count: count))
        count = 0
    }

    /// Flushes and closes the file. Closing twice is harmless.
    package func close() throws {
        guard isOpen else { return }
        defer {
            isOpen = false
            file = nil
        }
        try flush()
        guard let file else {
            tap?.closed(identity: .tapOnly(size: UInt64(bytesWritten)))
            return
        }
        if let tap, let identity = FileIdentity(descriptor: file.rawValue) { tap.closed(identity: identity) }
        do {
            try file.close()
        } catch {
            throw Self.error("cannot finish writing export file", relativePath, error)
        }
    }

    private func put(_ raw: UnsafeRawBufferPointer) throws {
        guard isOpen, let base = raw.baseAddress, raw.count > 0 else { return }
        if let file {
            do {
                _ = try file.writeAll(UnsafeRawBufferPointer(start: base, count: raw.count))
            } catch {
                throw Self.error("cannot write export file", relativePath, error)
            }
        }
        tap?.wrote(raw)
    }

    private static func error(_ message: String, _ path: String, _ error: any Error) -> CohortError {
        CohortError(
            .system, message, at: .init(file: path), hint: "check that the export directory exists, is writable and has free space",
            underlying: "\(error)")
    }
}
