import CohortCore
import CohortStore
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// One export's audit lifecycle, so that no verifiable export can exist that the audit trail does
/// not name:
///
/// 1. ``begin(workspace:studyID:baseName:outDirectory:uniqueName:archive:recipient:site:)`` reserves a
///    unique bag name (the staging folder), writes the locked pending-export marker, and commits
///    `export.begin`. Its sequence number is the export's **snapshot**: the roster is read after it.
/// 2. ``commit(included:details:)`` re-checks, in the same transaction that appends
///    `export.create` (naming the archive's SHA-256), every withdrawal committed since the
///    snapshot; a participant of the export who withdrew (exclude/erase) makes the export refuse.
/// 3. Only then do the files get their final names; ``published()`` records that they did.
/// 4. ``end()`` (always, from a `defer`) closes a trail left open by an error with
///    `export.abandoned`, removes the staging folder and partial files, and removes the marker.
///
/// A process killed anywhere leaves the marker unlocked; ``ExportRecovery`` finishes step 4 on the
/// next command that opens the workspace.
final class ExportInProgress {
    enum State {
        case begun
        case created
        case published
        case refused
    }

    let workspace: Workspace
    let marker: PendingExportMarker
    let beginSeq: Int64
    private let lock: PendingExportLock
    private(set) var state = State.begun

    var bagName: String { marker.bag }
    var stagingDirectory: URL { URL(fileURLWithPath: marker.stagingPath, isDirectory: true) }

    private init(workspace: Workspace, marker: PendingExportMarker, beginSeq: Int64, lock: PendingExportLock) {
        self.workspace = workspace
        self.marker = marker
        self.beginSeq = beginSeq
        self.lock = lock
    }

    /// Reserves the name, writes the marker and commits `export.begin`.
    ///
    /// - Parameter uniqueName: when true (no `--created-at`), a name already taken in the output
    ///   folder gets a `-2`, `-3`… suffix; when false the export refuses with `.conflict`.
    static func begin(
        workspace: Workspace, studyID: String, baseName: String, outDirectory: URL, uniqueName: Bool, archive: Bool, recipient: String,
        site: String? = nil
    ) throws -> ExportInProgress {
        let out = outDirectory.standardizedFileURL.path
        let bag = try reserveName(baseName, in: out, uniqueName: uniqueName)
        let marker = PendingExportMarker(exportID: UUID().uuidString.lowercased(), bag: bag, outDirectory: out, archive: archive)
        let lock: PendingExportLock
        do {
            lock = try PendingExportLock.create(marker, workspace: workspace.directory)
        } catch {
            marker.removeLeftovers()
            throw error
        }
        do {
            var details = ["export_id": marker.exportID, "bag": bag, "recipient": recipient, "archive": archive ? "true" : "false"]
            if let site { details["site"] = site }
            let begin = try workspace.store.appendEvent(actor: workspace.actor, action: "export.begin", subject: studyID, details: details, at: workspace.now())
            return ExportInProgress(workspace: workspace, marker: marker, beginSeq: begin.seq, lock: lock)
        } catch {
            // Nothing was audited: nothing to close.
            marker.removeLeftovers()
            lock.remove()
            throw error
        }
    }

    /// The first free name `base`, `base-2`, … in `out`, reserved by creating its staging folder
    /// with mkdir(2), which fails when the folder exists, so two exports never share a name even
    /// within one second.
    static func reserveName(_ base: String, in out: String, uniqueName: Bool) throws -> String {
        for n in 1...1000 {
            let name = n == 1 ? base : "\(base)-\(n)"
            let taken = [name, name + ".tar.gz", name + ".manifest.json", name + ".manifest.json.sig"].contains { PosixFile.exists(out + "/" + $0) }
            if !taken {
                let staging = PendingExportMarker.stagingPath(bag: name, in: out)
                if mkdir(staging, 0o700) == 0 { return name }
                guard errno == EEXIST else { throw PosixFile.error("cannot create the export's staging folder", path: staging) }
            }
            guard uniqueName else {
                throw CohortError(
                    .conflict, "the export already exists (or is being written)", at: .init(file: out + "/" + name),
                    hint: "choose another --out, or another --created-at")
            }
        }
        throw CohortError(.conflict, "1000 exports with this name already exist in the output folder", at: .init(file: out), hint: "choose another --out")
    }

    /// Commits `export.create` with `details` (plus `export_id` and `bag`) unless a participant
    /// in `included` withdrew in exclude/erase mode since the snapshot. Then the export refuses:
    /// `export.refused` (ids and counts only) is committed and the error names the participants'
    /// study codes, for the coordinator.
    @discardableResult
    func commit(included: [ExportedParticipant], subject: String, details: [String: String]) throws -> AuditEvent {
        var details = details
        details["export_id"] = marker.exportID
        details["bag"] = marker.bag
        let ids = Set(included.map(\.id))
        switch try workspace.store.commitExport(
            snapshotSeq: beginSeq, participantIDs: ids, actor: workspace.actor, subject: subject, details: details, at: workspace.now())
        {
        case let .committed(event):
            state = .created
            return event
        case let .withdrawnSinceSnapshot(withdrawn):
            try workspace.store.appendEvent(
                actor: workspace.actor, action: "export.refused", subject: subject,
                details: [
                    "export_id": marker.exportID, "bag": marker.bag, "reason": "withdrawal committed during the export",
                    "participants": String(withdrawn.count),
                ], at: workspace.now())
            state = .refused
            try workspace.checkpoint()
            let codes = withdrawn.compactMap { id in included.first { $0.id == id }?.code }
            throw CohortError(
                .conflict,
                "participant\(codes.count == 1 ? "" : "s") \(codes.joined(separator: ", ")) withdrew (exclude or erase) while the export was running; nothing was published",
                hint: "run the export again: it leaves withdrawn participants out")
        }
    }

    /// The files have their final names (and the folder is synced).
    func published() { state = .published }

    /// Closes the trail if an error left it open, removes leftovers and the marker. The marker
    /// stays when the closing event cannot be written, so recovery tries again.
    func end() {
        if state == .created && marker.isPublished { state = .published }
        switch state {
        case .begun, .created:
            let reason = state == .begun ? "failed before export.create" : "failed after export.create; the files were not published"
            if state == .created { Self.removeOrphans(marker) }
            do {
                try workspace.store.appendEvent(
                    actor: workspace.actor, action: "export.abandoned", subject: nil,
                    details: ["export_id": marker.exportID, "bag": marker.bag, "reason": reason], at: workspace.now())
                try workspace.checkpoint()
            } catch {
                marker.removeLeftovers()
                return
            }
        case .published, .refused:
            break
        }
        marker.removeLeftovers()
        lock.remove()
    }

    /// Removes final-named files of an export that was not completely published (the packager
    /// renames signature, manifest, archive — so at most the first two can be there).
    static func removeOrphans(_ marker: PendingExportMarker) {
        guard marker.archive, !PosixFile.exists(marker.archivePath) else { return }
        unlink(marker.signaturePath)
        unlink(marker.manifestPath)
    }
}
