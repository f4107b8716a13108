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
