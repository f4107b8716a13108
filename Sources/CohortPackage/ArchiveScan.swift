import CohortCore
import CohortCrypto
import CohortCompression
import Foundation
import CohortIO

/// One streaming pass over an export archive: the file's SHA-256 and size, gzip integrity
/// (CRC-32 and length of every member), tar structure, and — per member, without keeping
/// payload in memory — each file's SHA-256, size and row count. Tag files (small) are kept for
/// the bag checks. Optionally the bag (or the files of it asked for) is extracted to a temporary
/// directory as it is read.
struct ArchiveScan {
    /// A regular file found in the bag.
    struct Member {
        var size: UInt64
        var sha256: String
        var rows: Int?
        /// Why rows could not be counted (e.g. a bundle that is not JSON).
        var rowsProblem: String?
    }

    /// The largest tag file kept in memory for the bag checks.
    static let maximumTagFileSize = 256 * 1024 * 1024

    var openProblem: String?
    var size: UInt64 = 0
    var sha256 = ""
    var gzipProblem: String?
    var tarProblems: [String] = []
    /// The single top-level folder.
    var bagName: String?
    /// Regular files by bag-relative path.
    var files: [String: Member] = [:]
    /// Contents of files at the bag root (tag files).
    var tagContents: [String: [UInt8]] = [:]
    /// The extracted bag, when extraction was asked for and the archive read completely (holding
    /// the files `extracting` accepted, in their folders).
    var extractedBag: URL?
    /// How many bytes the decompressor produced (the tar stream, and any bytes after it).
    var inflatedBytes: UInt64 = 0

    /// A scan that did not read the archive, for `reason` (e.g. its size contradicts the manifest).
    init(notRead reason: String, size: UInt64) {
        openProblem = reason
        self.size = size
    }

    private init() {}

    /// Scans `archive`; when `extractTo` is given, writes under it the bag's folders and the files
    /// whose bag-relative path `extracting` accepts (every other file is read, hashed and counted
    /// all the same).
    ///
    /// - Parameters:
    ///   - inflateLimit: the most decompressed bytes to read; past it the scan stops with a gzip
    ///     problem (a decompression bomb costs at most this much work, whatever it expands to).
    ///   - progress: called after every read of the archive file with the bytes read so far
    ///     (increasing; the last call has the file's size when it was read to the end).
    static func run(
        archive: URL, extractTo: URL?, extracting: (String) -> Bool = { _ in true }, inflateLimit: UInt64 = .max,
        progress: ((UInt64) -> Void)? = nil
    ) -> ArchiveScan {
        var scan = ArchiveScan()
        let file: ReadableFile
        do {
            file = try ReadableFile(path: archive.path)
        } catch let error as CohortError {
            scan.openProblem = error.code == .notFound ? "archive file is missing" : error.message
            return scan
        } catch {
            scan.openProblem = "archive file cannot be opened"
            return scan
        }
        let reading = ArchiveReading(file: file, inflateLimit: inflateLimit, progress: progress)
        do {
            let gzip = try GzipReader(name: archive.lastPathComponent, source: { try reading.read(into: $0) })
            let inflatedSource: (UnsafeMutableRawBufferPointer) throws -> Int = { try reading.inflate(gzip, into: $0) }
            do {
                try scan.readMembers(TarReader(source: inflatedSource), extractTo: extractTo, extracting: extracting)
            } catch let error as CohortError {
                if reading.isIntact { scan.tarProblems.append(error.message) }
            } catch {
                if reading.isIntact { scan.tarProblems.append("tar could not be read") }
            }
            // Drain the gzip stream so its trailer (CRC-32, length) is checked even when the tar
            // stopped early.
            if reading.isIntact { ArchiveReading.drain(inflatedSource) }
        } catch {
            reading.gzipProblem = reading.gzipProblem ?? "gzip stream cannot be started"
        }
        // Hash whatever the decompressor did not consume, so the digest covers the whole file.
        if reading.readProblem == nil { ArchiveReading.drain { try reading.read(into: $0) } }
        scan.size = reading.size
        scan.inflatedBytes = reading.inflated
        scan.sha256 = Hex.encode(reading.hasher.finalize())
        scan.gzipProblem = reading.readProblem ?? reading.gzipProblem
        if scan.gzipProblem != nil || !scan.tarProblems.isEmpty { scan.extractedBag = nil }
        return scan
    }

    private mutating func readMembers(_ tar: TarReader, extractTo: URL?, extracting: (String) -> Bool) throws {
        var seen = Set<String>()
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        while let entry = try tar.next() {
            let components = entry.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard !entry.path.hasPrefix("/"), !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
                tarProblems.append("unsafe member path \(Self.quote(entry.path))")
                continue
            }
            guard let top = components.first else { continue }
            if bagName == nil { bagName = top }
            guard top == bagName else {
                tarProblems.append("member \(Self.quote(entry.path)) is outside the bag folder")
                continue
            }
            guard seen.insert(entry.path).inserted else {
                tarProblems.append("member \(Self.quote(entry.path)) appears twice")
                continue
            }
            let relative = components.dropFirst().joined(separator: "/")
            let target = extractTo.map { $0.appendingPathComponent(entry.path) }
            switch entry.kind {
            case .directory:
                if let target { try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true) }
            case .file:
                guard !relative.isEmpty else {
                    tarProblems.append("the bag folder is stored as a file")
                    continue
                }
                let wanted = extracting(relative) ? target : nil
                try readFile(entry: entry, relative: relative, isTag: components.count == 2, target: wanted, tar: tar, chunk: chunk)
            }
        }
        if bagName == nil { tarProblems.append("archive holds no bag") }
        if let extractTo, let bagName { extractedBag = extractTo.appendingPathComponent(bagName) }
    }

    private mutating func readFile(
        entry: TarReader.Entry, relative: String, isTag: Bool, target: URL?, tar: TarReader,
        chunk: UnsafeMutableRawBufferPointer
    ) throws {
        let hasher = SHA256Hasher()
        var counter = RowCounter(path: relative)
        var kept: [UInt8]? = isTag && entry.size <= UInt64(Self.maximumTagFileSize) ? [] : nil
        var output: Int32 = -1
        if let target {
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            output = open(target.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard output >= 0 else { throw FileSystem.error("cannot extract file", path: target.path) }
        }
        defer { if output >= 0 { close(output) } }
        var size: UInt64 = 0
        while true {
            let count = try tar.read(into: chunk)
            if count == 0 { break }
            let bytes = UnsafeRawBufferPointer(rebasing: chunk[0..<count])
            hasher.update(bytes)
            counter?.update(bytes)
            kept?.append(contentsOf: bytes)
            if output >= 0, let path = target?.path { try FileSystem.write(bytes, to: output, path: path) }
            size += UInt64(count)
        }
        var member = Member(size: size, sha256: Hex.encode(hasher.finalize()))
        if let counter {
            do {
                member.rows = try counter.finish()
            } catch let error as CohortError {
                member.rowsProblem = error.message
            }
        }
        files[relative] = member
        if let kept { tagContents[relative] = kept }
    }

    /// A path for a report line (already free of record values: paths are pseudonymous).
    static func quote(_ path: String) -> String {
        "`" + path.replacingOccurrences(of: "\n", with: "\\n") + "`"
    }
}
