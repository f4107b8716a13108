package import Foundation
package import CohortCore
import CohortCompression
import CohortCrypto
import CohortIO

/// Writes a bag directory as a reproducible `.tar.gz`: ustar/pax (``TarWriter``) into gzip
/// (``GzipWriter``, zlib) into a file.
///
/// The archive's single top-level folder is the bag directory's name. Entries are sorted by
/// path (a directory before its content), all stamped with `createdAt`, so the same bag and
/// time always give byte-identical archives. The compressed bytes are hashed as they are
/// written; the file is written under `.<name>.partial-<random>`, synced, and only then given
/// its final name, so a failure never leaves a final-named archive behind.
package enum ArchiveWriter {
    /// Archives `bagDirectory` to `archiveURL` and moves it into place.
    ///
    /// Use ``ExportPackager`` to publish an archive together with its signed manifest; this
    /// call publishes the archive alone.
    ///
    /// - Parameters:
    ///   - level: gzip level (1 fastest, 6 default, 9 smallest).
    /// - Throws: `.conflict` when `archiveURL` exists; `.invalidInput` for a bag holding
    ///   something other than files and directories or a bad level; `.system` for I/O failures.
    public static func write(bagDirectory: URL, to archiveURL: URL, createdAt: Timestamp, level: Int = 6) throws -> ArchiveResult {
        let (file, result) = try writePartial(bagDirectory: bagDirectory, to: archiveURL, createdAt: createdAt, level: level)
        try file.commit()
        try FileSystem.syncDirectory(archiveURL.deletingLastPathComponent().path)
        return result
    }

    /// Streams the tar form of `bagDirectory` (no compression) into `sink`.
    package static func writeTar(
        bagDirectory: URL, createdAt: Timestamp, sink: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        try writeTar(bagDirectory: bagDirectory, createdAt: createdAt, precompressed: nil, sink: sink)
    }

    /// Files already deflated as they were written, and how to put one into the stream.
    struct Precompressed {
        let spool: DeflateSpool
        let write: (DeflatedFile) throws -> Void
    }

    /// ``writeTar(bagDirectory:createdAt:sink:)``, taking from `precompressed` each file the spool
    /// deflated in the version on disk (its header and padding still go to `sink`), and each file
    /// written to the spool alone, in its folder's name order as if it were on disk.
    private static func writeTar(
        bagDirectory: URL, createdAt: Timestamp, precompressed: Precompressed?, sink: @escaping (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let root = bagDirectory.standardizedFileURL
        let tar = TarWriter(modificationTime: floorSeconds(createdAt), sink: sink)
        let name = root.lastPathComponent
        guard case .directory = try FileSystem.kind(of: root.path) else {
            throw CohortError(.invalidInput, "bag directory is not a directory", at: CohortError.Location(file: root.path))
        }
        try tar.addDirectory(path: name)
        // Files written to the spool alone (no copy on disk) go where the listing would put them.
        var tapOnly = precompressed?.spool.tapOnlyPaths ?? []
        try addChildren(of: root.path, as: name, relative: "", to: tar, precompressed: precompressed, tapOnly: &tapOnly)
        if let missing = tapOnly.sorted().first {
            throw CohortError(
                .integrity, "a payload file written to the compression spool alone has no folder in the bag", at: .init(file: missing),
                hint: "run the export again")
        }
        try tar.finish()
    }

    /// Writes the archive under its temporary name and syncs it, without publishing it.
    /// `faultAfterBytes` (tests only) makes the file sink fail once that many bytes are written.
    /// `deflated`: files deflated as they were written (``DeflateSpool``), copied into the archive
    /// rather than read and compressed again; the archive holds the same bytes either way.
    static func writePartial(
        bagDirectory: URL, to archiveURL: URL, createdAt: Timestamp, level: Int, deflated: DeflateSpool? = nil, faultAfterBytes: UInt64? = nil
    ) throws -> (PartialFile, ArchiveResult) {
        let file = try PartialFile(finalURL: archiveURL)
        let hasher = SHA256Hasher()
        var size: UInt64 = 0
        let gzip = try GzipWriter(level: level) { bytes in
            if let limit = faultAfterBytes, size + UInt64(bytes.count) > limit {
                throw CohortError(.system, "simulated write failure")
            }
            try file.write(bytes)
            hasher.update(bytes)
            size += UInt64(bytes.count)
        }
        let precompressed = deflated.map { Precompressed(spool: $0, write: { try gzip.writePrecompressed($0) }) }
        try writeTar(bagDirectory: bagDirectory, createdAt: createdAt, precompressed: precompressed) { try gzip.write($0) }
        try gzip.finish()
        try file.syncAndClose()
        return (file, ArchiveResult(url: archiveURL, sha256: Hex.encode(hasher.finalize()), size: size))
    }

    /// `relative`: the folder's path inside the bag ("" for the bag itself), as the spool names files.
    /// `tapOnly`: the spool's files with no copy on disk not added yet (each is added in its
    /// folder, in name order with the files on disk, and removed).
    private static func addChildren(
        of directory: String, as archivePath: String, relative: String, to tar: TarWriter, precompressed: Precompressed?,
        tapOnly: inout Set<String>
    ) throws {
        let prefix = relative.isEmpty ? "" : relative + "/"
        let spooled = tapOnly.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }.map { String($0.dropFirst(prefix.count)) }
        let onDisk = try FileSystem.children(of: directory)
        let children = spooled.isEmpty ? onDisk : (onDisk + spooled).sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        for child in children {
            let path = directory + "/" + child
            let memberPath = archivePath + "/" + child
            let relativePath = relative.isEmpty ? child : relative + "/" + child
            if tapOnly.remove(relativePath) != nil {
                guard let precompressed, let file = precompressed.spool.deflatedTapOnly(relativePath), !FileSystem.exists(path) else {
                    throw CohortError(.integrity, "a payload file written to the compression spool alone is also on disk", at: .init(file: relativePath))
                }
                try tar.addFile(path: memberPath, size: file.size) { if file.size > 0 { try precompressed.write(file) } }
                continue
            }
            switch try FileSystem.kind(of: path) {
            case .directory:
                try tar.addDirectory(path: memberPath)
                try addChildren(of: path, as: memberPath, relative: relativePath, to: tar, precompressed: precompressed, tapOnly: &tapOnly)
            case .regular:
                if let precompressed, let file = precompressed.spool.deflated(relativePath, identity: FileIdentity(path: path)) {
                    try tar.addFile(path: memberPath, size: file.size) { try precompressed.write(file) }
                } else {
                    try tar.addFile(path: memberPath, contentsOf: URL(fileURLWithPath: path))
                }
            case .other:
                throw CohortError(
                    .invalidInput, "bag holds something other than a regular file or directory",
                    at: CohortError.Location(file: path), hint: "symbolic links and devices cannot be exported")
            }
        }
    }

    private static func floorSeconds(_ time: Timestamp) -> Int64 {
        let ms = time.epochMilliseconds
        return ms >= 0 ? ms / 1000 : (ms - 999) / 1000
    }
}
