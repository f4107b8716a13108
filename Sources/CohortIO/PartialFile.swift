import CohortCore
package import Foundation
import SystemPackage

/// A file being written under a temporary name beside its final name, so that a reader never
/// sees a final-named file that is incomplete.
///
/// The temporary name is `.<final name>.partial-<random hex>` in the same directory (so the
/// final move is a same-file-system rename). ``syncAndClose()`` flushes the data to disk;
/// ``commit()`` moves it into place and refuses to replace an existing file; ``replace()`` (a
/// file made with `replacing: true`, such as the workspace's `audit.head` or a report page)
/// takes the place of the old one atomically and syncs the folder, failing when it cannot. A
/// partial file that is never committed is removed in `deinit`, so an error anywhere leaves
/// nothing behind.
package final class PartialFile {
    package let finalPath: String
    package let temporaryPath: String
    private var descriptor: FileDescriptor?
    private var committed = false

    /// Creates the temporary file (mode `permissions` before the umask, 0644 by default) for
    /// `finalURL`; with `replacing`, a file already there is replaced by ``replace()``.
    ///
    /// - Throws: `.conflict` when `finalURL` already exists (unless `replacing`); `.system` when
    ///   the file cannot be created.
    package init(finalURL: URL, permissions: Int = 0o644, replacing: Bool = false) throws {
        let finalPath = finalURL.path
        guard replacing || !FileSystem.exists(finalPath) else {
            throw CohortError(
                .conflict, "output file already exists", at: CohortError.Location(file: finalPath),
                hint: "choose another output directory or remove the old export")
        }
        let directory = finalURL.deletingLastPathComponent().path
        // Unique, not secret: the system generator (getrandom) keeps two runs from colliding.
        let suffix = String(UInt64.random(in: 0..<(1 << 48)), radix: 16)
        let temporaryPath = directory + "/." + finalURL.lastPathComponent + ".partial-" + suffix
        let descriptor = try FileSystem.open(
            temporaryPath, .writeOnly, options: [.create, .exclusiveCreate, .closeOnExec, .noFollow],
            permissions: FilePermissions(rawValue: CModeT(permissions)), "cannot create output file")
        self.finalPath = finalPath
        self.temporaryPath = temporaryPath
        self.descriptor = descriptor
    }

    deinit {
        try? descriptor?.close()
        if !committed { unlink(temporaryPath) }
    }

    /// Appends `buffer`.
    package func write(_ buffer: UnsafeRawBufferPointer) throws {
        guard let descriptor else { throw CohortError(.system, "output file is already closed") }
        try FileSystem.write(buffer, to: descriptor, path: temporaryPath)
    }

    /// Appends `bytes`.
    package func write(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { try write($0) }
    }

    /// Flushes the file's data to disk and closes it.
    package func syncAndClose() throws {
        guard let descriptor else { return }
        defer {
            try? descriptor.close()
            self.descriptor = nil
        }
        guard fsync(descriptor.rawValue) == 0 else { throw FileSystem.error("cannot sync output file", path: temporaryPath) }
    }

    /// Moves the (synced) file to its final name without ever replacing an existing file.
    ///
    /// - Throws: `.conflict` when the final name appeared meanwhile; `.system` otherwise.
    package func commit() throws {
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

    /// Moves the (synced) file over its final name, replacing what is there atomically, then
    /// syncs the folder so that the new name survives a crash.
    ///
    /// - Throws: `.system` when the move or the folder's sync fails (the new content may then be
    ///   in place but not yet durable).
    package func replace() throws {
        try syncAndClose()
        guard rename(temporaryPath, finalPath) == 0 else {
            throw FileSystem.error("cannot move output file into place", path: finalPath)
        }
        committed = true
        try FileSystem.syncDirectory(URL(fileURLWithPath: finalPath).deletingLastPathComponent().path)
    }
}
