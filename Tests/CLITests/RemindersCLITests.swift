import Foundation
import Testing

/// `cohort reminders`: messages a coordinator can mail-merge, identifiers only where meant.
@Suite(.serialized)
struct RemindersCLITests {
    /// The reminder greets the participant by name (not HTML-escaped), the mail-merge CSV carries
    /// name and contact (mode 0600), and neither the audit trail nor stderr holds any of them.
    @Test func remindersCarryNameAndContactOnlyWhereMeant() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        try cli.enrollTwo()  // no data: both are below every threshold
        let r = try cli.ws("reminders", "--out", cli.path("rem"), "--mail-merge", cli.path("merge.csv"))
        #expect(r.status == 0, "\(r.output)")
        let text = try String(contentsOfFile: cli.path("rem/P-0001.txt"), encoding: .utf8)
        #expect(text.hasPrefix("Hello Zoë O'Brien,\n"), "\(text.prefix(80))")

        let merge = try String(contentsOfFile: cli.path("merge.csv"), encoding: .utf8)
        let lines = merge.components(separatedBy: "\r\n")
        #expect(lines.first == "code,name,email,phone,address,message")
        #expect(lines.filter { $0.hasPrefix("P-000") }.count == 2, "one row per participant: \(merge)")
        let zoe = try #require(lines.first { $0.hasPrefix("P-0001,") })
        #expect(zoe.hasPrefix("P-0001,Zoë O'Brien,zoe@example.net,(555) 123-4567,12 Harbor Drive,\"Hello Zoë O'Brien,"), "\(zoe)")
        #expect(merge.contains("P-0002,José García-López,jose@example.net,+1 555 987 6543,\"7 Elm Road, Apt 2\","), "\(merge)")
        let mode = (try FileManager.default.attributesOfItem(atPath: cli.path("merge.csv"))[.posixPermissions] as? NSNumber)?.intValue
        #expect(mode == 0o600)

        let audit = try cli.ws("audit", "show", "--format", "json")
        #expect(audit.status == 0)
        for value in ["Zoë", "O'Brien", "zoe@example.net", "123-4567", "García", "jose@example.net"] {
            #expect(!audit.stdout.contains(value), "\(value) in the audit trail")
            #expect(!r.stderr.contains(value), "\(value) on stderr")
        }
    }
}
