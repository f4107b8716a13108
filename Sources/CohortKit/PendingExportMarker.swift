import CohortCore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The marker of an export in progress: `<workspace>/pending-exports/<export id>.json`.
///
/// It is written (and synced) before `export.begin` commits and removed only when the export's
/// audit trail is closed (`export.create` with its files published, `export.refused` or
/// `export.abandoned`) and its leftovers are gone. The exporting process holds an exclusive
/// `flock(2)` on it for as long as it runs, so a marker nobody holds belongs to an export that was
/// killed: ``ExportRecovery`` closes it on the next command that opens the workspace.
struct PendingExportMarker: Codable, Sendable, Equatable {
    /// Random id that ties the marker to its audit events (`export_id`).
    var exportID: String
    /// The reserved bag name (file names derive from it).
    var bag: String
    /// The absolute output folder.
    var outDirectory: String
    /// Whether the export publishes an archive (else the bag folder).
    var archive: Bool

    enum CodingKeys: String, CodingKey {
        case exportID = "export_id"
        case bag
        case outDirectory = "out"
        case archive
    }

    static let directoryName = "pending-exports"

    static func directory(of workspace: URL) -> URL { workspace.appendingPathComponent(directoryName, isDirectory: true) }

    /// The hidden folder in the output folder where the bag is built; creating it reserves the
    /// name. Like every leftover of an interrupted export, its name starts with a dot and holds
    /// `.partial-`.
    static func stagingPath(bag: String, in outDirectory: String) -> String { outDirectory + "/." + bag + ".partial-staging" }
    var stagingPath: String { Self.stagingPath(bag: bag, in: outDirectory) }
    var archivePath: String { outDirectory + "/" + bag + ".tar.gz" }
    var manifestPath: String { outDirectory + "/" + bag + ".manifest.json" }
    var signaturePath: String { manifestPath + ".sig" }
    var bagPath: String { outDirectory + "/" + bag }

    /// Whether the export's final names are all in place.
    var isPublished: Bool {
        archive ? [archivePath, manifestPath, signaturePath].allSatisfy(PosixFile.exists) : PosixFile.exists(bagPath)
    }

    /// Removes the staging folder and the packager's `.<bag>.….partial-…` files.
    func removeLeftovers() {
        try? FileManager.default.removeItem(atPath: stagingPath)
        let prefix = "." + bag + "."
        for name in (try? FileManager.default.contentsOfDirectory(atPath: outDirectory)) ?? []
        where name.hasPrefix(prefix) && name.contains(".partial-") {
            unlink(outDirectory + "/" + name)
        }
    }
}

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

/// The POSIX calls the export's durable steps need, with errors that name the path only.
enum PosixFile {
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    static func syncDirectory(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw error("cannot open folder", path: path) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw error("cannot sync folder", path: path) }
    }

    static func writeAll(_ bytes: [UInt8], to descriptor: Int32, path: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw error("cannot write file", path: path)
            }
            offset += written
        }
    }

    static func error(_ message: String, path: String) -> CohortError {
        CohortError(.system, message, at: .init(file: path), hint: "check free space and permissions", underlying: String(cString: strerror(errno)))
    }
}
