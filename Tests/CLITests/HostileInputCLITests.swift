import Foundation
import Testing

/// End-to-end tests of what a careless or hostile operator can do to a workspace's keys and
/// inputs (issue #14): the binary must refuse before it changes anything, and say how to recover.
@Suite(.serialized)
struct HostileInputCLITests {
    @Test func usageErrorsExitWithTheDocumentedCode() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let help = try cli.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("2 usage error"), "the help documents exit code 2")
        for args in [["frobnicate"], ["participant", "import"], ["init", "--no-such-flag"], ["export", "--recipient", "a", "--compression", "huge"]] {
            let r = try cli.run(args)
            #expect(r.status == 2, "cohort \(args.joined(separator: " ")) → \(r.status): \(r.output)")
            #expect(r.stderr.contains("Usage:") || r.stderr.contains("Error:"), "\(r.stderr)")
        }
        let readme = try String(contentsOf: CLI.repoRoot.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("| 2 | usage error"), "the README's table says the same")
    }

    @Test func replacedPIIKeyIsRefusedBeforeAnythingIsStored() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let before = (try cli.count("participants"), try cli.count("audit_events"))
        // Another valid 32-byte key, with the right mode: only the check value can tell.
        let keyPath = cli.workspace + "/keys/pii.key"
        try FileManager.default.removeItem(atPath: keyPath)
        try Data((0..<32).map { UInt8($0 * 7 & 0xFF) }).write(to: URL(fileURLWithPath: keyPath))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyPath)
        let enroll = try cli.ws("participant", "enroll", "--code", "P-0099", "--name", "Ines Wrongkey", "--time-zone", "UTC", "--enrolled-on", CLI.day(-1))
        #expect(enroll.status == 6, "\(enroll.output)")
        #expect(enroll.stderr.contains("pii.key does not match this study: restore the original keys/ folder"), "\(enroll.stderr)")
        #expect(!enroll.output.contains("Ines"))
        #expect(try cli.count("participants") == before.0, "nothing stored")
        #expect(try cli.count("audit_events") == before.1, "nothing audited")
        for args in [["participant", "list"], ["audit", "verify"], ["export", "--recipient", "analysts", "--out", cli.path("out")]] {
            let r = try cli.run(args + ["-w", cli.workspace])
            #expect(r.status == 6, "cohort \(args.joined(separator: " ")): \(r.output)")
        }
    }

    @Test func swappedKeysFolderIsRefused() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let other = try cli.run(["init", "--dir", cli.path("other")])
        #expect(other.status == 0, "\(other.output)")
        try FileManager.default.removeItem(atPath: cli.workspace + "/keys")
        try FileManager.default.moveItem(atPath: cli.path("other") + "/keys", toPath: cli.workspace + "/keys")
        let r = try cli.ws("participant", "list")
        #expect(r.status == 6, "\(r.output)")
        #expect(r.stderr.contains("does not match this study"))
    }

    @Test func symlinkedOrOpenKeysFolderIsRefusedWithChmodHint() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let keys = cli.workspace + "/keys"
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: keys)
        let open = try cli.ws("participant", "list")
        #expect(open.status == 6, "\(open.output)")
        #expect(open.stderr.contains("hint: chmod 700 \(keys)"), "\(open.stderr)")
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: keys)
        #expect(try cli.ws("participant", "list").status == 0)

        try FileManager.default.moveItem(atPath: keys, toPath: cli.path("elsewhere"))
        try FileManager.default.createSymbolicLink(atPath: keys, withDestinationPath: cli.path("elsewhere"))
        let linked = try cli.ws("participant", "list")
        #expect(linked.status == 6, "\(linked.output)")
        #expect(linked.stderr.contains("symbolic link") && linked.stderr.contains("chmod 700"), "\(linked.stderr)")
    }

    @Test func demoKeepsNoImportFileWithIdentifiersAndSaysWhereTheyWere() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let r = try cli.run(["demo", "--dir", cli.path("demo"), "--participants", "3", "--seed", "5"])
        #expect(r.status == 0, "\(r.output)")
        let line = try #require(r.stdout.split(separator: "\n").first { $0.contains("import files") }.map(String.init), "\(r.stdout)")
        #expect(line.hasSuffix("deleted after import"), "\(line)")
        let folder = try #require(line.components(separatedBy: "generated in ").last?.components(separatedBy: ",").first)
        #expect(!folder.hasPrefix(cli.path("demo")), "outside the workspace")
        #expect(!FileManager.default.fileExists(atPath: folder), "the import folder is gone")
        // Nothing in the workspace is a CSV/NDJSON import file (exports live in exports/*.tar.gz).
        let files = FileManager.default.enumerator(atPath: cli.path("demo"))?.allObjects.compactMap { $0 as? String } ?? []
        #expect(!files.contains { $0.hasSuffix("roster.csv") || $0.hasPrefix("import") }, "\(files)")

        // Kept on request, but only outside the workspace.
        let inside = try cli.run(["demo", "--dir", cli.path("demo"), "--participants", "2", "--yes", "--import-files", cli.path("demo") + "/import"])
        #expect(inside.status == 3 && inside.stderr.contains("inside the demo workspace"), "\(inside.output)")
        let kept = try cli.run(["demo", "--dir", cli.path("demo"), "--participants", "2", "--yes", "--import-files", cli.path("kept")])
        #expect(kept.status == 0, "\(kept.output)")
        #expect(FileManager.default.fileExists(atPath: cli.path("kept") + "/roster.csv"))
        #expect(kept.stdout.contains("kept (--import-files"))
    }
}
