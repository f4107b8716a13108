import Foundation
import Testing

/// `cohort audit verify --export-manifest`: an export's signed checkpoint catches a trail cut
/// back even when the database (study.db, or the PostgreSQL database) and audit.head were both
/// rolled back together.
@Suite(.serialized) struct AuditExportCheckpointCLITests {
    let helper = ExportCLITests()

    @Test func aTrailRolledBackWithItsAuditHeadIsCaughtByTheNewestExport() throws {
        let cli = try helper.demo()
        defer { cli.cleanup() }
        let ws = cli.workspace
        // The attacker's older copy: the database and audit.head as they were before the export
        // (study.db, or on PostgreSQL a copy of the database).
        let fm = FileManager.default
        try CLI.copyWorkspace(ws, to: cli.path("old"))
        let published = try helper.exported(cli)

        let fine = try cli.run(["audit", "verify", "-w", ws, "--export-manifest", published.manifest])
        #expect(fine.status == 0, "\(fine.output)")
        #expect(fine.stderr.contains("✔"), "\(fine.output)")

        try CLI.rollBackDatabase(of: ws, to: cli.path("old"))
        try fm.removeItem(atPath: ws + "/audit.head")
        try fm.copyItem(atPath: cli.path("old/audit.head"), toPath: ws + "/audit.head")
        let alone = try cli.run(["audit", "verify", "-w", ws])
        #expect(alone.status == 0, "a consistent older copy passes on its own: \(alone.output)")
        let caught = try cli.run(["audit", "verify", "-w", ws, "--export-manifest", published.manifest])
        #expect(caught.status == 1, "\(caught.output)")
        #expect(caught.output.contains("events were removed"), "\(caught.output)")

        // A manifest whose signature does not verify proves nothing and is said to.
        try Data("{}".utf8).write(to: URL(fileURLWithPath: published.manifest + ".sig"))
        let unsigned = try cli.run(["audit", "verify", "-w", ws, "--export-manifest", published.manifest])
        #expect(unsigned.status == 1 && unsigned.output.contains("does not verify"), "\(unsigned.output)")
    }
}
