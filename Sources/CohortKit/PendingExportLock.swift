import CohortCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// An open, exclusively locked marker file.
final class PendingExportLock {
    let path: String
    private var descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Writes `marker` under a temporary name, locks and syncs it, then renames it into place and
    /// syncs the folder, so a marker that recovery can see is complete and (while this process
    /// lives) locked.
    static func create(_ marker: PendingExportMarker, workspace: URL) throws -> PendingExportLock {
        let directory = PendingExportMarker.directory(of: workspace).path
        if mkdir(directory, 0o700) != 0 && errno != EEXIST {
            throw PosixFile.error("cannot create the pending-exports folder", path: directory)
        }
        let temporary = directory + "/." + marker.exportID + ".tmp"
        let final = directory + "/" + marker.exportID + ".json"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw PosixFile.error("cannot create the export marker", path: temporary) }
        let lock = PendingExportLock(path: final, descriptor: descriptor)
        do {
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { throw PosixFile.error("cannot lock the export marker", path: temporary) }
            let bytes = Array(try JSONEncoder().encode(marker))
            try PosixFile.writeAll(bytes, to: descriptor, path: temporary)
            guard fsync(descriptor) == 0 else { throw PosixFile.error("cannot sync the export marker", path: temporary) }
            guard rename(temporary, final) == 0 else { throw PosixFile.error("cannot move the export marker into place", path: final) }
        } catch {
            unlink(temporary)
            throw error
        }
        try PosixFile.syncDirectory(directory)
        return lock
    }

    /// Tries to take the lock of an existing marker; nil when another process holds it (a running
    /// export) or the marker was removed meanwhile.
    static func acquire(path: String) -> PendingExportLock? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return nil }
        let lock = PendingExportLock(path: path, descriptor: descriptor)
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return nil }
        // Another recovery may have finished and unlinked it while we waited to open it.
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_nlink > 0 else { return nil }
        return lock
    }

    /// The marker's contents.
    func read() -> PendingExportMarker? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONDecoder().decode(PendingExportMarker.self, from: data)
    }

    /// Removes the marker (the export's trail is closed) and releases the lock.
    func remove() {
        unlink(path)
        try? PosixFile.syncDirectory((path as NSString).deletingLastPathComponent)
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
    }
}
