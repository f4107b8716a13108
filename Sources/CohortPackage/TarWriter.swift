package import Foundation
import CohortCore
import CohortCrypto
import CohortIO

/// A streaming POSIX ustar writer with pax extended headers, for reproducible archives.
///
/// Every entry gets the same metadata: the given `mtime`, uid/gid 0, empty uname/gname, mode
/// 0644 for files and 0755 for directories. A pax header (typeflag `x`) carrying `path=` comes
/// before an entry whose name is not ASCII or longer than the 100-byte ustar name field, and
/// `size=` for files of 8 GiB or more. File content is streamed into the sink in 64 KiB
/// chunks. ``finish()`` writes the two 512-byte zero blocks that end the archive.
///
/// Bytes go to `sink` in order (copy them: buffers are reused). Not `Sendable`: one writer per
/// task.
package final class TarWriter {
    /// The tar block size.
    package static let blockSize = 512
    private static let chunkSize = 64 * 1024

    private let sink: (UnsafeRawBufferPointer) throws -> Void
    private let mtime: Int64
    private let buffer: UnsafeMutableRawBufferPointer
    private var finished = false

    /// A writer stamping every entry with `modificationTime` (seconds since 1970, clamped at 0).
    package init(modificationTime: Int64, sink: @escaping (UnsafeRawBufferPointer) throws -> Void) {
        self.sink = sink
        self.mtime = max(modificationTime, 0)
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    /// Adds a directory entry; a trailing `/` is added to `path` if missing.
    package func addDirectory(path: String) throws {
        try checkWritable()
        let name = path.hasSuffix("/") ? path : path + "/"
        try writeHeader(name: name, size: 0, typeflag: UInt8(ascii: "5"), mode: 0o755)
    }

    /// Adds a regular file with the given content (for small, in-memory files).
    package func addFile(path: String, bytes: [UInt8]) throws {
        try checkWritable()
        try writeHeader(name: path, size: UInt64(bytes.count), typeflag: UInt8(ascii: "0"), mode: 0o644)
        try bytes.withUnsafeBytes { try sink($0) }
        try writePadding(for: UInt64(bytes.count))
    }

    /// Adds a regular file of `size` bytes whose content `content` writes by another route (a
    /// gzip writer's precompressed bytes): the header, then `content`, then the padding.
    package func addFile(path: String, size: UInt64, content: () throws -> Void) throws {
        try checkWritable()
        try writeHeader(name: path, size: size, typeflag: UInt8(ascii: "0"), mode: 0o644)
        try content()
        try writePadding(for: size)
    }

    /// Adds the regular file at `url` as `path`, streaming its content in 64 KiB chunks.
    ///
    /// - Throws: `.integrity` when the file's size changes while it is archived; `.system` for
    ///   I/O failures; whatever `sink` throws.
    package func addFile(path: String, contentsOf url: URL) throws {
        try checkWritable()
        let file = try ReadableFile(path: url.path)
        guard case .regular(let size) = try FileSystem.kind(of: url.path) else {
            throw CohortError(.invalidInput, "only regular files can be archived", at: CohortError.Location(file: url.path))
        }
        try writeHeader(name: path, size: size, typeflag: UInt8(ascii: "0"), mode: 0o644)
        var remaining = size
        while remaining > 0 {
            let wanted = Int(min(UInt64(buffer.count), remaining))
            let count = try file.readFully(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
            guard count == wanted else { throw changed(url.path) }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            remaining -= UInt64(count)
        }
        // One more byte would mean the file grew after its size was taken.
        let extra = try file.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<1]))
        guard extra == 0 else { throw changed(url.path) }
        try writePadding(for: size)
    }

    /// Ends the archive with two zero blocks. Call exactly once.
    public func finish() throws {
        try checkWritable()
        finished = true
        let zeros = [UInt8](repeating: 0, count: 2 * Self.blockSize)
        try zeros.withUnsafeBytes { try sink($0) }
    }

    private func checkWritable() throws {
        guard !finished else { throw CohortError(.invalidInput, "tar archive is already finished") }
    }

    private func changed(_ path: String) -> CohortError {
        CohortError(
            .integrity, "file changed while it was being archived", at: CohortError.Location(file: path),
            hint: "do not modify the bag while exporting; run the export again")
    }

    private func writePadding(for size: UInt64) throws {
        let remainder = Int(size % UInt64(Self.blockSize))
        guard remainder != 0 else { return }
        let zeros = [UInt8](repeating: 0, count: Self.blockSize - remainder)
        try zeros.withUnsafeBytes { try sink($0) }
    }

    /// Writes the pax header (when needed) and the ustar header for one entry.
    private func writeHeader(name: String, size: UInt64, typeflag: UInt8, mode: Int) throws {
        let nameBytes = Array(name.utf8)
        let needsPaxPath = nameBytes.count > 100 || nameBytes.contains { $0 >= 0x80 }
        let needsPaxSize = size > TarHeader.maximumOctalSize
        if needsPaxPath || needsPaxSize {
            var records: [UInt8] = []
            if needsPaxPath { records += TarHeader.paxRecord(key: "path", value: nameBytes) }
            if needsPaxSize { records += TarHeader.paxRecord(key: "size", value: Array(String(size).utf8)) }
            let paxName = TarHeader.paxHeaderName(for: nameBytes)
            try emit(
                TarHeader.ustar(name: paxName, size: UInt64(records.count), mtime: mtime, typeflag: UInt8(ascii: "x"), mode: 0o644))
            try records.withUnsafeBytes { try sink($0) }
            try writePadding(for: UInt64(records.count))
        }
        let fallback = needsPaxPath ? TarHeader.asciiFallback(nameBytes, isDirectory: typeflag == UInt8(ascii: "5")) : nameBytes
        try emit(TarHeader.ustar(name: fallback, size: needsPaxSize ? 0 : size, mtime: mtime, typeflag: typeflag, mode: mode))
    }

    private func emit(_ block: [UInt8]) throws {
        try block.withUnsafeBytes { try sink($0) }
    }
}
