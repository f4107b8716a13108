import CohortCore
import CohortCrypto
import Foundation

/// A file being written under a temporary name beside its final name, so that a reader never
/// sees a final-named file that is incomplete.
///
/// The temporary name is `.<final name>.partial-<random hex>` in the same directory (so the
/// final move is a same-file-system rename). ``syncAndClose()`` flushes the data to disk;
/// ``commit()`` moves it into place and refuses to replace an existing file. A partial file that
/// is never committed is removed in `deinit`, so an error anywhere leaves nothing behind.
final class PartialFile {
    let finalPath: String
    let temporaryPath: String
    private var descriptor: Int32
    private var committed = false

    /// Creates the temporary file (mode 0644 before the umask) for `finalURL`.
    ///
    /// - Throws: `.conflict` when `finalURL` already exists; `.system` when the file cannot be
    ///   created.
    init(finalURL: URL) throws {
        let finalPath = finalURL.path
        guard !FileSystem.exists(finalPath) else {
            throw CohortError(
                .conflict, "output file already exists", at: CohortError.Location(file: finalPath),
                hint: "choose another output directory or remove the old export")
        }
        let directory = finalURL.deletingLastPathComponent().path
        let suffix = Hex.encode(try SecureRandom.bytes(6))
        let temporaryPath = directory + "/." + finalURL.lastPathComponent + ".partial-" + suffix
        let descriptor = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { throw FileSystem.error("cannot create output file", path: temporaryPath) }
        self.finalPath = finalPath
        self.temporaryPath = temporaryPath
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
        if !committed { unlink(temporaryPath) }
    }

    /// Appends `buffer`.
    func write(_ buffer: UnsafeRawBufferPointer) throws {
        guard descriptor >= 0 else { throw CohortError(.system, "output file is already closed") }
        try FileSystem.write(buffer, to: descriptor, path: temporaryPath)
    }

    /// Appends `bytes`.
    func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Flushes the file's data to disk and closes it.
    func syncAndClose() throws {
        guard descriptor >= 0 else { return }
        defer {
            close(descriptor)
            descriptor = -1
        }
        guard fsync(descriptor) == 0 else { throw FileSystem.error("cannot sync output file", path: temporaryPath) }
    }

    /// Moves the (synced) file to its final name without ever replacing an existing file.
    ///
    /// - Throws: `.conflict` when the final name appeared meanwhile; `.system` otherwise.
    func commit() throws {
        try syncAndClose()
        // link(2) fails with EEXIST rather than replacing: an atomic "rename if absent".
        if link(temporaryPath, finalPath) == 0 {
            unlink(temporaryPath)
        } else if errno == EEXIST {
            throw CohortError(.conflict, "output file already exists", at: CohortError.Location(file: finalPath))
        } else {
            // File systems without hard links: check, then rename.
            guard !FileSystem.exists(finalPath) else {
                throw CohortError(.conflict, "output file already exists", at: CohortError.Location(file: finalPath))
            }
            guard rename(temporaryPath, finalPath) == 0 else {
                throw FileSystem.error("cannot move output file into place", path: finalPath)
            }
        }
        committed = true
    }
}
