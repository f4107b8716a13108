import Foundation
import Testing

/// End to end: consent, withdrawal in every mode, receipts, compliance and reminders.
@Suite(.serialized)
struct ConsentWithdrawalCLITests {
    func tokens(_ cli: CLI) throws -> [String: String] {
        let roster = try cli.write(
            "roster.csv",
            CLI.rosterHeader
                + "P-0001,Zoë O'Brien,zoe@example.net,(555) 123-4567,1980-02-29,female,12 Harbor Drive,02139,MRN1234567,Europe/Berlin,\(CLI.day(-20)),Zoë's Apple Watch\n"
                + "P-0002,José García-López,jose@example.net,+1 555 987 6543,1950-07-01,male,7 Elm Road,10027,MRN7654321,America/New_York,\(CLI.day(-20)),\n"
                + "P-0003,Ingrid Müller,ingrid@example.net,555.222.3333,1990-01-01,female,3 Oak Avenue,60614,MRN5555555,Asia/Kolkata,\(CLI.day(-20)),Ingrid's Garmin Venu\n")
        let r = try cli.run(["participant", "import", roster, "--format", "csv", "-w", cli.workspace])
        #expect(r.status == 0, "\(r.output)")
        var result: [String: String] = [:]
        for line in r.stdout.split(whereSeparator: \.isNewline).dropFirst() {
            let cells = line.split(separator: ",").map(String.init)
            if cells.count == 2 { result[cells[0]] = cells[1] }
        }
        return result
    }

    func consentAll(_ cli: CLI) throws {
        for code in ["P-0001", "P-0002", "P-0003"] {
            let r = try cli.ws("consent", "record", "--sharing", "broad", "--participant", code, "--version", "1.0", "--signed-at", "\(CLI.day(-20))T12:00:00Z", "--signature", "typed:Someone")
            #expect(r.status == 0, "\(r.output)")
        }
    }

    func importData(_ cli: CLI, days: Int = 15) throws {
        var csv = "participant,kind,start,value,note\n"
        for code in ["P-0001", "P-0002", "P-0003"] {
            for d in 1...days { csv += "\(code),pain,\(CLI.day(-20 + d))T12:00:00Z,3,\n" }
        }
        let r = try cli.ws("data", "import", try cli.write("pain.csv", csv))
        #expect(r.status == 0, "\(r.output)")
    }

    @Test func importsNeedConsentAndConsentRulesHold() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        _ = try tokens(cli)
        let file = try cli.write("p.csv", "participant,kind,start,value\nP-0001,pain,\(CLI.day(-2))T12:00:00Z,3\n")
        let refused = try cli.ws("data", "import", file)
        #expect(refused.status == 8, "\(refused.output)")
        #expect(refused.stderr.contains("p.csv:2: participant") && refused.stderr.contains("consent"))
        #expect(try cli.count("records") == 0)
        // Unknown version, before enrollment, in the future.
        #expect(try cli.ws("consent", "record", "--sharing", "broad", "--participant", "P-0001", "--version", "9.9").status == 4)
        #expect(try cli.ws("consent", "record", "--sharing", "broad", "--participant", "P-0001", "--version", "1.0", "--signed-at", "2001-01-01T00:00:00Z").status == 3)
        #expect(try cli.ws("consent", "record", "--sharing", "broad", "--participant", "P-0001", "--version", "1.0", "--signed-at", "2999-01-01T00:00:00Z").status == 3)
        try consentAll(cli)
        #expect(try cli.ws("data", "import", file).status == 0)
        // Re-consent keeps history: two rows, the first superseded.
        let again = try cli.ws("consent", "record", "--participant", "P-0001", "--version", "1.1", "--sharing", "broad")
        #expect(again.status == 0 && again.stdout.contains("superseded 1"), "\(again.output)")
        let (_, statuses) = try cli.sql("SELECT c.status FROM consents c JOIN participants p ON p.pk = c.participant_pk WHERE p.code = 'P-0001' ORDER BY signed_at_ms")
        #expect(statuses.split(separator: "\n") == ["superseded", "active"])
        let status = try cli.ws("consent", "status", "--format", "csv")
        #expect(status.stdout.contains("P-0001,1.1"))
        // The rendered document is the text whose hash is stored.
        let rendered = try cli.ws("consent", "render", "--version", "1.0")
        #expect(rendered.stdout.contains("IRB-2026-0412"))
        let (_, stored) = try cli.sql("SELECT DISTINCT document_sha256 FROM consents WHERE version = '1.0'")
        let renderedFile = try cli.write("doc.txt", rendered.stdout)
        let (_, digest) = try CLI.tool("/usr/bin/sha256sum", [renderedFile])
        #expect(digest.hasPrefix(stored.trimmingCharacters(in: .whitespacesAndNewlines)), "stored \(stored) rendered \(digest)")
    }

    @Test func wrongTokenChangesNothingAndDoesNotRevealCodes() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        _ = try tokens(cli)
        try consentAll(cli)
        let events = try cli.count("audit_events")
        let wrong = try cli.ws("withdraw", "--participant", "P-0001", "--token", "AAAA-BBBB", "--mode", "stop")
        let unknown = try cli.ws("withdraw", "--participant", "P-9999", "--token", "AAAA-BBBB", "--mode", "stop")
        #expect(wrong.status == 6 && unknown.status == 6)
        #expect(wrong.stderr == unknown.stderr)
        #expect(try cli.count("audit_events") > events)
        let (_, denied) = try cli.sql("SELECT count(*) FROM audit_events WHERE action = 'withdraw.denied' AND CAST(details AS text) NOT LIKE '%AAAA%'")
        #expect(denied.trimmingCharacters(in: .whitespacesAndNewlines) == "2")
        let (_, status) = try cli.sql("SELECT status FROM participants WHERE code = 'P-0001'")
        #expect(status.trimmingCharacters(in: .whitespacesAndNewlines) == "active")
    }

    @Test func everyModeEndToEndWithReceiptsAndEscalation() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        let t = try tokens(cli)
        try consentAll(cli)
        try importData(cli)
        // stop by the participant, with a signed receipt.
        let stop = try cli.ws("withdraw", "--participant", "P-0001", "--token", t["P-0001"] ?? "", "--mode", "stop", "--receipt", cli.path("r1.txt"))
        #expect(stop.status == 0, "\(stop.output)")
        #expect(stop.stdout.contains("WITHDRAWAL RECEIPT"))
        #expect(try cli.ws("receipt", "verify", cli.path("r1.txt")).status == 0)
        let (_, _) = try CLI.tool("/usr/bin/cp", [cli.workspace + "/keys/signing.pub.pem", cli.path("pub.pem")])
        #expect(try cli.run(["receipt", "verify", cli.path("r1.txt"), "--public-key", cli.path("pub.pem")]).status == 0)
        var receipt = try String(contentsOfFile: cli.path("r1.txt"), encoding: .utf8)
        receipt = receipt.replacingOccurrences(of: "Mode:               stop", with: "Mode:               erase")
        try receipt.write(toFile: cli.path("r1-forged.txt"), atomically: true, encoding: .utf8)
        let forged = try cli.ws("receipt", "verify", cli.path("r1-forged.txt"))
        #expect(forged.status == 1 && forged.stdout.contains("does not verify"))
        // Re-signed with the study key (as a site holding the shared key could): the signature
        // holds, but -w finds that the trail never issued a withdrawal for P-0002.
        let resigned = try Self.resign(try String(contentsOfFile: cli.path("r1.txt"), encoding: .utf8), code: "P-0002", key: cli.workspace + "/keys/signing.pem", in: cli)
        try resigned.write(toFile: cli.path("r1-resigned.txt"), atomically: true, encoding: .utf8)
        let signatureOnly = try cli.run(["receipt", "verify", cli.path("r1-resigned.txt"), "--public-key", cli.path("pub.pem")])
        #expect(signatureOnly.status == 0 && signatureOnly.stdout.contains("not checked"), "\(signatureOnly.output)")
        let crossChecked = try cli.ws("receipt", "verify", cli.path("r1-resigned.txt"))
        #expect(crossChecked.status == 1 && crossChecked.stdout.contains("another participant's withdrawal"), "\(crossChecked.output)")
        #expect(try cli.ws("receipt", "verify", cli.path("r1.txt")).stdout.contains("of the audit trail issued it"))
        // Data after the withdrawal is refused; twice reports the existing withdrawal.
        let late = try cli.write("late.csv", "participant,kind,start,value\nP-0001,pain,\(CLI.day(1))T00:30:00Z,3\n")
        #expect(try cli.ws("data", "import", late).status != 0)
        let twice = try cli.ws("withdraw", "--participant", "P-0001", "--token", t["P-0001"] ?? "", "--mode", "stop")
        #expect(twice.status == 0 && twice.stdout.contains("already withdrew"), "\(twice.output)")
        // Escalation stop → exclude allowed; exclude → stop refused.
        #expect(try cli.ws("withdraw", "--participant", "P-0001", "--staff", "--reason", "asked", "--mode", "exclude", "--yes").status == 0)
        let back = try cli.ws("withdraw", "--participant", "P-0001", "--staff", "--reason", "asked", "--mode", "stop")
        #expect(back.status == 5)
        // Confirmation: without a terminal and without --yes, a destructive mode changes nothing.
        let unconfirmed = try cli.ws("withdraw", "--participant", "P-0003", "--staff", "--reason", "request", "--mode", "erase")
        #expect(unconfirmed.status == 1)
        // Dry run shows counts and changes nothing.
        let dry = try cli.ws("withdraw", "--participant", "P-0003", "--staff", "--reason", "request", "--mode", "erase", "--dry-run")
        #expect(dry.status == 0 && dry.stdout.contains("15 records"), "\(dry.output)")
        #expect(try cli.count("records") == 45)
        // Erase: records and identifiers gone, consent rows and audit chain stay.
        let erase = try cli.ws("withdraw", "--participant", "P-0003", "--staff", "--reason", "request", "--mode", "erase", "--yes")
        #expect(erase.status == 0, "\(erase.output)")
        #expect(try cli.count("records") == 30)
        #expect(try cli.count("consents") == 3)
        #expect(try cli.ws("audit", "verify").status == 0)
        let raw = try cli.databaseBytes()
        for identifier in ["Ingrid", "Müller", "ingrid@example.net", "555.222.3333", "MRN5555555", "3 Oak Avenue", "60614", "Ingrid's Garmin Venu", "P-0003"] {
            #expect(raw.range(of: Data(identifier.utf8)) == nil, "\(identifier) still in the database at \(String(describing: raw.range(of: Data(identifier.utf8))))")
        }
        // Erased participants are not counted by compliance; the stopped one stops at withdrawal.
        let compliance = try cli.ws("compliance", "--format", "json")
        #expect(compliance.status == 0)
        #expect(!compliance.stdout.contains("P-0003"))
    }

    @Test func complianceAndRemindersFormats() throws {
        let cli = try CLI.withWorkspace()
        defer { cli.cleanup() }
        _ = try tokens(cli)
        try consentAll(cli)
        try importData(cli, days: 10)
        let table = try cli.ws("compliance")
        #expect(table.status == 0 && table.stdout.contains("daily-symptom-log"), "\(table.output)")
        let csv = try cli.ws("compliance", "--format", "csv", "--below", "80%")
        #expect(csv.status == 0 && csv.stdout.contains("P-0001"))
        let json = try cli.ws("compliance", "--format", "json", "--as-of", CLI.day(0))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["schema"] as? String == "cohort/compliance-report@1")
        let reminders = try cli.ws("reminders", "--out", cli.path("rem"))
        #expect(reminders.status == 0, "\(reminders.output)")
        let files = try FileManager.default.contentsOfDirectory(atPath: cli.path("rem"))
        #expect(files.contains("P-0001.txt"))
        let text = try String(contentsOfFile: cli.path("rem") + "/P-0001.txt", encoding: .utf8)
        #expect(text.contains("AxSpA-Wear"))
    }
    /// `receipt` with its participant code changed in the signed JSON block and signed again
    /// with the Ed25519 key at `key` (`openssl pkeyutl -sign -rawin`), as a holder of the key could.
    static func resign(_ receipt: String, code: String, key: String, in cli: CLI) throws -> String {
        let begin = try #require(receipt.range(of: "-----BEGIN COHORT RECEIPT-----\n") ?? receipt.range(of: "RECEIPT-----\n"))
        let signatureStart = try #require(receipt.range(of: "-----BEGIN COHORT SIGNATURE-----") ?? receipt.range(of: "-----BEGIN", range: begin.upperBound..<receipt.endIndex))
        let blockEnd = try #require(receipt.range(of: "-----END", range: begin.upperBound..<signatureStart.lowerBound))
        let encoded = receipt[begin.upperBound..<blockEnd.lowerBound].split(separator: "\n").joined()
        let data = try #require(Data(base64Encoded: encoded))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["participant_code"] = code
        let json = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]).base64EncodedString()
        var wrapped = ""
        var line = ""
        for ch in json {
            line.append(ch)
            if line.count == 64 {
                wrapped += line + "\n"
                line = ""
            }
        }
        if !line.isEmpty { wrapped += line + "\n" }
        let signed = String(receipt[..<begin.upperBound]) + wrapped + String(receipt[blockEnd.lowerBound..<signatureStart.lowerBound])
        try signed.write(toFile: cli.path("to-sign.txt"), atomically: true, encoding: .utf8)
        let (status, output) = try CLI.tool("/usr/bin/openssl", ["pkeyutl", "-sign", "-rawin", "-inkey", key, "-in", cli.path("to-sign.txt"), "-out", cli.path("sig.bin")])
        try #require(status == 0, "\(output)")
        let signature = try Data(contentsOf: URL(fileURLWithPath: cli.path("sig.bin"))).base64EncodedString()
        let tail = receipt[signatureStart.lowerBound...]
        let keyLine = try #require(tail.split(separator: "\n").first { $0.hasPrefix("key:") })
        let header = try #require(tail.split(separator: "\n").first)
        let footer = try #require(tail.split(separator: "\n").last)
        return signed + header + "\n" + keyLine + "\n" + signature + "\n" + footer + "\n"
    }
}
