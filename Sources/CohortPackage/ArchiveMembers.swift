import CohortCore
import CohortCompression
package import Foundation

/// Extracts chosen files of an export archive (`.tar.gz` holding one bag folder), for tools that
/// read the published files alone (`cohort deid risk`). Checks tar structure and gzip integrity
/// as it reads; does not check digests or signatures — that is `cohort verify`'s job.
package enum ArchiveMembers {
    /// Writes the bag-relative files `wanted` accepts (e.g. `data/csv/participants.csv`) under
    /// `directory`, keeping their relative paths, and returns those paths.
    ///
    /// - Throws: `CohortError` (`notFound`, `integrity`) naming the archive when it is missing,
    ///   not gzip, not tar, or holds an unsafe path.
    package static func extract(archive: URL, into directory: URL, wanted: (String) -> Bool) throws -> [String] {
        let gzip = try GzipReader(contentsOf: archive)
        let tar = TarReader { buffer in try gzip.read(into: buffer) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        var written: [String] = []
        while let entry = try tar.next() {
            guard entry.kind == .file else { continue }
            let components = entry.path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard !entry.path.hasPrefix("/"), !components.contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
                throw CohortError(
                    .integrity, "the archive holds a member with an unsafe path", at: .init(file: archive.path),
                    hint: "run `cohort verify` on the archive; do not extract it")
            }
            guard components.count > 1 else { continue }
            let relative = components.dropFirst().joined(separator: "/")
            guard wanted(relative) else { continue }
            let target = directory.appendingPathComponent(relative)
            try FileManager.default.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: target.path, contents: nil), let handle = FileHandle(forWritingAtPath: target.path) else {
                throw CohortError(.system, "cannot write a temporary file", at: .init(file: target.path), hint: "check that the temporary folder is writable")
            }
            defer { try? handle.close() }
            while true {
                let count = try tar.read(into: chunk)
                if count == 0 { break }
                handle.write(Data(UnsafeRawBufferPointer(rebasing: chunk[0..<count])))
            }
            written.append(relative)
        }
        return written
    }
}
