import CohortCompression
import CohortCore
import CohortCrypto
import CohortIO

/// The archive file as ``ArchiveScan`` reads it: every byte read is hashed and counted, the
/// decompressed bytes are bounded by the signed manifest's account, and the first read or
/// gzip problem is kept (the tar reader sees only that reading stopped).
final class ArchiveReading {
    let file: ReadableFile
    let hasher = SHA256Hasher()
    /// The most decompressed bytes to read (see ``ArchiveScan/run(archive:extractTo:inflateLimit:progress:)``).
    let inflateLimit: UInt64
    let progress: ((UInt64) -> Void)?
    private(set) var size: UInt64 = 0
    private(set) var inflated: UInt64 = 0
    private(set) var readProblem: String?
    var gzipProblem: String?

    init(file: ReadableFile, inflateLimit: UInt64, progress: ((UInt64) -> Void)?) {
        self.file = file
        self.inflateLimit = inflateLimit
        self.progress = progress
    }

    /// Whether the file and the gzip stream have read without a problem so far.
    var isIntact: Bool { gzipProblem == nil && readProblem == nil }

    /// Reads the archive file into `buffer`, hashing and counting what was read.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do {
            let count = try file.read(into: buffer)
            hasher.update(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            size += UInt64(count)
            if count > 0 { progress?(size) }
            return count
        } catch {
            readProblem = "archive file cannot be read"
            throw error
        }
    }

    /// Decompresses from `gzip` into `buffer`, never more than the limit allows (plus one byte,
    /// to see it passed: then it throws).
    func inflate(_ gzip: GzipReader, into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
        do {
            let room = inflateLimit == .max ? UInt64(buffer.count) : inflateLimit - min(inflated, inflateLimit) + 1
            let window = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(UInt64(buffer.count), room))])
            let count = try gzip.read(into: window)
            inflated += UInt64(count)
            if inflated > inflateLimit {
                let error = CohortError(
                    .integrity, "the archive decompresses to more than the \(inflateLimit) bytes its signed manifest accounts for; stopped there")
                gzipProblem = error.message
                throw error
            }
            return count
        } catch let error as CohortError {
            gzipProblem = gzipProblem ?? error.message + (error.underlying.map { " (\($0))" } ?? "")
            throw error
        }
    }

    /// Reads `source` to its end (or first error), discarding the bytes.
    static func drain(_ source: (UnsafeMutableRawBufferPointer) throws -> Int) {
        let sink = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { sink.deallocate() }
        while (try? source(sink)).map({ $0 > 0 }) ?? false {}
    }
}
