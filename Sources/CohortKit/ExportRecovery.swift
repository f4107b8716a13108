import CohortCore
import CohortStore
import CohortCrypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Closes the audit trail of exports that were killed, on the next command that opens the
/// workspace (see ``ExportInProgress``).
///
/// For every pending-export marker that no process holds locked:
/// - no `export.begin` committed → nothing was audited; only leftovers are removed;
/// - `export.begin` without `export.create` (or `export.refused`/`export.abandoned`) →
///   `export.abandoned` ("interrupted before export.create");
/// - `export.create` but the final files are not all there → `export.abandoned` ("the files never
///   appeared"), and a published signature or manifest without its archive is removed;
/// - `export.create` with all final files → the export was published; nothing is appended.
/// In every case the staging folder, the `.partial-` files and the marker are removed.
///
/// A read-only workspace (an auditor's copy) is left as it is.
enum ExportRecovery {
    /// Recovers dead exports when there are any. A read-only command still closes them when the
    /// workspace's files are writable (through a writable store of its own), so the next command,
    /// whatever it is, records what a killed export left; a read-only copy is left as it is.
    static func recoverIfPending(_ workspace: Workspace, directory: URL, options: StoreOpenOptions, keystore: Keystore) throws {
        let markers = PendingExportMarker.directory(of: directory).path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: markers), !names.isEmpty else { return }
        guard workspace.store.isReadOnly else {
            try recover(workspace)
            return
        }
        guard access(markers, W_OK) == 0, workspace.store.canBeWritten else { return }
        var writable = options
        writable.readOnly = false
        let store = try workspace.store.reopened(options: writable)
        try recover(Workspace(directory: directory, store: store, keystore: keystore, actor: workspace.actor, now: workspace.now))
    }

    /// Recovers every dead export; returns the bag names it closed with `export.abandoned`.
    @discardableResult
    static func recover(_ workspace: Workspace) throws -> [String] {
        let directory = PendingExportMarker.directory(of: workspace.directory).path
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory), !names.isEmpty else { return [] }
        guard access(directory, W_OK) == 0, workspace.store.canBeWritten else { return [] }
        var abandoned: [String] = []
        for name in names.sorted() {
            let path = directory + "/" + name
            if name.hasPrefix(".") && name.hasSuffix(".tmp") {
                // A marker killed before its rename: no export.begin can exist for it, but its
                // name was reserved (the staging folder) just before it was written.
                if let lock = PendingExportLock.acquire(path: path) {
                    lock.read()?.removeLeftovers()
                    lock.remove()
                }
                continue
            }
            guard name.hasSuffix(".json"), let lock = PendingExportLock.acquire(path: path) else { continue }
            guard let marker = lock.read() else {
                throw CohortError(
                    .integrity, "a pending-export marker is unreadable", at: .init(file: path),
                    hint: "it is written complete before it gets its name, so it was edited; check the audit trail's export events, then delete it")
            }
            if try close(marker, workspace: workspace) { abandoned.append(marker.bag) }
            marker.removeLeftovers()
            lock.remove()
        }
        return abandoned
    }

    /// Appends `export.abandoned` when the marker's export is open; true when it did.
    static func close(_ marker: PendingExportMarker, workspace: Workspace) throws -> Bool {
        let events = try workspace.store.exportEvents(exportID: marker.exportID)
        guard events.contains(where: { $0.action == "export.begin" }) else { return false }
        if events.contains(where: { $0.action == "export.abandoned" || $0.action == "export.refused" }) { return false }
        let reason: String
        if events.contains(where: { $0.action == "export.create" }) {
            if marker.isPublished { return false }
            ExportInProgress.removeOrphans(marker)
            reason = "interrupted after export.create; the files never appeared"
        } else {
            reason = "interrupted before export.create"
        }
        try workspace.store.appendEvent(
            actor: workspace.actor, action: "export.abandoned", subject: nil,
            details: ["export_id": marker.exportID, "bag": marker.bag, "reason": reason], at: workspace.now())
        try workspace.checkpoint()
        return true
    }
}
