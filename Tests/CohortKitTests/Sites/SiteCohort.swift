import CohortCore
import CohortKit
import CohortStore
import Foundation

/// A two-site study: 30 participants under the minimal protocol (no k-anonymity, so every
/// participant in scope is exported), every third one enrolled at site `north-zz1` (10), the
/// others at `south-zz2` (20), enrolled on 2026-03-01, each consented and with a pain log on each
/// of 10 days from 2026-03-02. The site names are chosen so that they cannot occur in an export by chance.
/// "Now" is 2026-04-20T12:00:00Z.
struct SiteCohort {
    static let now = Date(timeIntervalSince1970: 1_776_686_400)  // 2026-04-20T12:00:00Z
    static let north = "north-zz1"
    static let south = "south-zz2"
    static let count = 30
    static let days = 10

    let directory: URL
    let workspace: Workspace

    /// The site of participant `i` (0-based), by construction.
    static func site(_ i: Int) -> String { i % 3 == 0 ? north : south }
    static func code(_ i: Int) -> String { String(format: "P-%04d", i + 1) }
    /// The codes enrolled at `site`, by construction.
    static func codes(at site: String) -> Set<String> { Set((0..<count).filter { Self.site($0) == site }.map(code)) }

    static let protocolURL = ImportFixture.repositoryRoot.appendingPathComponent("protocols/minimal.yaml")

    /// The cohort in a new SQLite workspace.
    init() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("sites-\(UUID().uuidString)")
        let workspace = try Workspace.create(at: directory.appendingPathComponent("ws"), protocolURL: Self.protocolURL, actor: "test", now: { Self.now })
        try self.init(workspace: workspace, directory: directory)
    }

    /// The cohort enrolled into `workspace` (its protocol pinned), scratch files in `directory`.
    init(workspace: Workspace, directory: URL) throws {
        self.directory = directory
        self.workspace = workspace
        // Zones without daylight saving: a participant's published UTC offset never depends on the date shift.
        let zones = ["UTC", "Asia/Tokyo", "Africa/Nairobi"]
        let entries = (0..<Self.count).map { i in
            (RosterEntry(code: Self.code(i), name: "Site Qx\(i)ow", timeZone: zones[i % 3], enrolledOn: "2026-03-01", site: Self.site(i)), line: Int?.none)
        }
        _ = try Roster(workspace: workspace).enroll(entries, file: nil, source: "test")
        let signed = Timestamp(epochMilliseconds: 1_772_366_400_000)  // 2026-03-01T12:00:00Z
        var csv = "participant,kind,start,end,value\n"
        for i in 0..<Self.count {
            _ = try ConsentService(workspace: workspace).record(code: Self.code(i), version: "1.0", signedAt: signed, signature: "typed:Test", sharing: .broad)
            for day in 0..<Self.days {
                csv += "\(Self.code(i)),pain,2026-03-\(String(format: "%02d", day + 2))T08:00:00,,\(i % 10)\n"
            }
        }
        let url = directory.appendingPathComponent("records.csv")
        try Data(csv.utf8).write(to: url)
        _ = try RecordImporter(workspace: workspace).importFile(url)
    }

    func cleanup() { try? FileManager.default.removeItem(at: directory) }

    /// Exports for `analyst` (CSV and JSON) into a fresh folder, the site's participants only when `site` is given.
    func export(site: String?, archive: Bool) throws -> ExportOutcome {
        var options = ExportOptions(
            recipient: "analyst", formats: [.csv, .json, .fhir], outDirectory: directory.appendingPathComponent("out-\(UUID().uuidString)"),
            createdAt: Self.now, archive: archive)
        options.site = site
        return try ExportJob(workspace: workspace, options: options).run()
    }
}
