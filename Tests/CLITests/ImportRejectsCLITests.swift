import Foundation
import Testing

/// `data import --rejects FILE`: the bad rows go to FILE, and FILE, once fixed, imports as it is.
@Suite(.serialized)
struct ImportRejectsCLITests {
    /// The rejects file's `line,field,reason` columns are accepted and ignored by the importer, so
    /// a coordinator fixes the values in place and imports the same file; a row still wrong is
    /// rejected again with its line in the rejects file.
    @Test func aFixedRejectsFileImportsAsItIs() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()
        let d = CLI.day(-2)
        let mixed = try cli.write(
            "m.csv",
            "participant,kind,start,value,note\nP-0001,fatigue,\(d)T09:00:00,3,\nP-0001,fatigue,\(d)T10:00:00,99,slept badly\nP-0001,pain,\(d)T11:00:00,42,\n")
        let first = try cli.ws("data", "import", mixed, "--rejects", cli.path("rejects.csv"))
        #expect(first.status == 0, "\(first.output)")
        #expect(first.stdout.contains("1 new") && first.stdout.contains("2 rejected"), "\(first.stdout)")
        #expect(try cli.count("records") == 1)
        let rejects = try String(contentsOfFile: cli.path("rejects.csv"), encoding: .utf8)
        #expect(rejects.hasPrefix("line,field,reason,participant,kind,start,end,value,unit,text,source,note\r\n"), "\(rejects)")

        // Fix the fatigue value only: that row imports, the pain row is rejected again.
        let fixed = rejects.replacingOccurrences(of: "T10:00:00,,99,", with: "T10:00:00,,4,")
        #expect(fixed != rejects)
        try Data(fixed.utf8).write(to: URL(fileURLWithPath: cli.path("rejects.csv")))
        let second = try cli.ws("data", "import", cli.path("rejects.csv"), "--rejects", cli.path("rejects2.csv"))
        #expect(second.status == 0, "\(second.output)")
        #expect(second.stdout.contains("1 new") && second.stdout.contains("1 rejected"), "\(second.stdout)")
        #expect(try cli.count("records") == 2)
        let still = try String(contentsOfFile: cli.path("rejects2.csv"), encoding: .utf8)
        #expect(still.contains("\r\n3,value,"), "the pain row is line 3 of the fixed file: \(still)")

        // Without --rejects the same file is all or nothing, and its annotation columns are no error.
        let strict = try cli.ws("data", "import", cli.path("rejects2.csv"))
        #expect(strict.status == 3, "\(strict.output)")
        #expect(!strict.stderr.contains("unknown column"), "\(strict.stderr)")
        #expect(strict.stderr.contains("rejects2.csv:2: value"), "\(strict.stderr)")
    }
}
