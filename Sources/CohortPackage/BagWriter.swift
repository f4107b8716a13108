package import Foundation
package import CohortCore
import CohortCrypto
import CohortIO

/// Finishes a BagIt 1.0 bag (RFC 8493) around a complete `data/` directory.
///
/// Writes `bagit.txt`, `bag-info.txt` (standard labels plus `Cohort-Protocol-Revision`,
/// `Cohort-Protocol-SHA256` and `Cohort-Recipient`), `manifest-sha256.txt` and
/// `tagmanifest-sha256.txt`. Payload files are hashed (and their rows counted) in 64 KiB chunks,
/// so memory stays flat however large they are, several files at once on a multi-core machine.
package enum BagWriter {
    /// The tag files a cohort bag has, in the order the tag manifest lists them (by path).
    package static let tagFileNames = ["bag-info.txt", "bagit.txt", "manifest-sha256.txt", "tagmanifest-sha256.txt"]

    /// The content of `bagit.txt`.
    package static let bagitDeclaration = "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"

    /// The bag (and archive base) name: `<study>-<UTC stamp>`, e.g. `ra-flare-20250314T083000Z`.
    public static func bagName(studyID: String, createdAt: Timestamp) -> String {
        let utc = Timestamp(epochMilliseconds: createdAt.epochMilliseconds, utcOffsetSeconds: 0).iso8601
        // 2025-03-14T08:30:00[.123]Z → 20250314T083000Z
        let stamp = utc.prefix(19).filter { $0 != "-" && $0 != ":" } + "Z"
        return studyID + "-" + stamp
    }

    /// Writes the tag files of the bag at `bagDirectory`, whose `data/` must be complete.
    ///
    /// Existing tag files are replaced. Anything else beside `data/` is refused, so that the
    /// bag holds exactly what its manifests list.
    ///
    /// A payload file that `digests` describes as written (and unchanged since, see
    /// ``PayloadDigests``) is not read again; every other file is read and hashed.
    ///
    /// - Returns: every payload file (path, size, SHA-256, rows) and every tag file.
    /// - Throws: `.invalidInput` when `data/` is missing, holds something other than regular
    ///   files and directories, the bag root holds other files, or a metadata value spans lines;
    ///   `.system` for I/O failures.
    public static func write(bagDirectory: URL, metadata: BagMetadata) throws -> BagContents {
        try write(bagDirectory: bagDirectory, metadata: metadata, digests: nil)
    }

    /// ``write(bagDirectory:metadata:)``, taking the descriptions in `digests` of the files it
    /// still describes, and of the files written to its taps alone (no copy on disk) as payload
    /// files of `data/`.
    package static func write(bagDirectory: URL, metadata: BagMetadata, digests: PayloadDigests?) throws -> BagContents {
        let root = bagDirectory.standardizedFileURL.path
        try checkRoot(root)
        var found: [(path: String, relative: String, size: UInt64)] = []
        try collect(directory: root + "/data", relative: "data", into: &found)
        // Files are hashed on every core, largest first; the result does not depend on the order.
        found.sort { $0.size > $1.size }
        var payload = try Parallel.map(found) { file in
            try digests?.description(of: file.relative, identity: FileIdentity(path: file.path)) ?? hash(path: file.path, relative: file.relative)
        }
        // Files written to the digests' taps alone have no copy on disk: their descriptions are all there is.
        let onDisk = Set(found.map(\.relative))
        for file in digests?.tapOnlyFiles ?? [] {
            guard !onDisk.contains(file.path) else {
                throw CohortError(.integrity, "a payload file written without a copy on disk is also on disk", at: .init(file: file.path))
            }
            payload.append(file)
        }
        payload.sort { Array($0.path.utf8).lexicographicallyPrecedes(Array($1.path.utf8)) }

        var tags: [BagFile] = []
        func writeTag(_ name: String, _ text: String) throws {
            let bytes = Array(text.utf8)
            try FileSystem.writeSmallFile(bytes, to: root + "/" + name)
            tags.append(BagFile(path: name, size: UInt64(bytes.count), sha256: SHA256.hex(bytes)))
        }
        try writeTag("bagit.txt", bagitDeclaration)
        try writeTag("bag-info.txt", try bagInfo(metadata, payload: payload))
        try writeTag("manifest-sha256.txt", payload.map { BagPath.manifestLine(sha256: $0.sha256, path: $0.path) }.joined())
        tags.sort { $0.path < $1.path }
        try writeTag("tagmanifest-sha256.txt", tags.map { BagPath.manifestLine(sha256: $0.sha256, path: $0.path) }.joined())
        tags.sort { $0.path < $1.path }
        return BagContents(payloadFiles: payload, tagFiles: tags)
    }

    /// The `bag-info.txt` text.
    static func bagInfo(_ metadata: BagMetadata, payload: [BagFile]) throws -> String {
        let octets = payload.reduce(UInt64(0)) { $0 + $1.size }
        let labels: [(String, String)] = [
            ("Source-Organization", metadata.sourceOrganization),
            ("External-Identifier", metadata.studyID),
            ("Bagging-Date", metadata.baggingDate.description),
            ("Payload-Oxum", "\(octets).\(payload.count)"),
            ("Bag-Software-Agent", "cohort \(metadata.toolVersion)"),
            ("Cohort-Protocol-Revision", String(metadata.protocolRevision)),
            ("Cohort-Protocol-SHA256", metadata.protocolSHA256),
            ("Cohort-Recipient", metadata.recipient),
        ]
        var text = ""
        for (label, value) in labels {
            guard !value.contains(where: { $0.isNewline }) else {
                throw CohortError(
                    .invalidInput, "bag-info value must be a single line", at: CohortError.Location(field: label))
            }
            text += label + ": " + value + "\n"
        }
        return text
    }

    private static func checkRoot(_ root: String) throws {
        guard case .directory = try FileSystem.kind(of: root) else {
            throw CohortError(.invalidInput, "bag directory is not a directory", at: CohortError.Location(file: root))
        }
        guard FileSystem.exists(root + "/data"), case .directory = try FileSystem.kind(of: root + "/data") else {
            throw CohortError(
                .invalidInput, "bag has no data directory", at: CohortError.Location(file: root),
                hint: "write the payload into <bag>/data/ first")
        }
        for name in try FileSystem.children(of: root) where name != "data" && !tagFileNames.contains(name) {
            throw CohortError(
                .invalidInput, "bag directory holds a file outside data/", at: CohortError.Location(file: root + "/" + name),
                hint: "put payload files under data/")
        }
    }

    private static func collect(directory: String, relative: String, into files: inout [(path: String, relative: String, size: UInt64)]) throws {
        for name in try FileSystem.children(of: directory) {
            let path = directory + "/" + name
            let relativePath = relative + "/" + name
            switch try FileSystem.kind(of: path) {
            case .directory:
                try collect(directory: path, relative: relativePath, into: &files)
            case .regular(let size):
                files.append((path, relativePath, size))
            case .other:
                throw CohortError(
                    .invalidInput, "bag payload holds something other than a regular file or directory",
                    at: CohortError.Location(file: path), hint: "symbolic links and devices cannot be exported")
            }
        }
    }

    /// Streams the file once: SHA-256, size and rows together.
    static func hash(path: String, relative: String) throws -> BagFile {
        let file = try ReadableFile(path: path)
        let hasher = SHA256Hasher()
        var counter = RowCounter(path: relative)
        var size: UInt64 = 0
        try file.forEachChunk { chunk in
            hasher.update(chunk)
            counter?.update(chunk)
            size += UInt64(chunk.count)
        }
        return BagFile(path: relative, size: size, sha256: Hex.encode(hasher.finalize()), rows: try counter?.finish())
    }
}
