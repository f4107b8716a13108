import Foundation
import Testing

/// End to end: k-anonymity over every published participant column, checked against the published
/// participants.csv by independent recounts (a Python csv-module script and pycanon), and
/// `cohort deid risk` on archives and bag folders.
@Suite(.serialized)
struct DeidRiskCLITests {
    /// The Python checks run when `.venv` exists; in CI (`CI=true`) they run regardless, so a
    /// missing `.venv` fails there instead of being skipped.
    static var pythonOrCI: Bool { ExportCLITests.hasPython || ProcessInfo.processInfo.environment["CI"] == "true" }
    static let export = ExportCLITests()

    /// The shipped axspa protocol with the time zone published and a sensitive field named.
    static func studyProtocol(k: Int = 3) throws -> String {
        let text = String(decoding: try Data(contentsOf: CLI.repoRoot.appendingPathComponent("protocols/axspa-wearables.yaml")), as: UTF8.self)
        let changed = text
            .replacingOccurrences(of: "    k: 3\n", with: "    k: \(k)\n    sensitive: [medication_log.text]\n")
            .replacingOccurrences(of: "participant.time_zone: drop", with: "participant.time_zone: keep")
        #expect(changed != text && changed.contains("sensitive:") && changed.contains("participant.time_zone: keep"))
        return changed
    }

    /// A workspace with `count` generated participants (fixed seed; ages, sexes, ZIPs, zones and
    /// enrollment dates spread out so that most are unique before anonymization).
    static func cohort(count: Int, k: Int = 3) throws -> CLI {
        let cli = try CLI()
        // Templates resolve from the protocol folder's parent, as for protocols/ in the repository.
        try FileManager.default.createDirectory(at: cli.directory.appendingPathComponent("protocols"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(
            at: cli.directory.appendingPathComponent("templates"), withDestinationURL: CLI.repoRoot.appendingPathComponent("templates"))
        let protocolFile = try cli.write("protocols/study.yaml", try studyProtocol(k: k))
        let r = try cli.run(["init", "--dir", cli.workspace, "--protocol", protocolFile])
        try #require(r.status == 0, "init failed: \(r.output)")
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        let zips = ["02139", "10027", "60614", "94110", "30301", "73301", "98101", "19104", "55401", "80202"]
        let zones = ["America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "Europe/Berlin", "Asia/Kolkata"]
        var roster = CLI.rosterHeader
        for i in 1...count {
            let birth = String(format: "%04d-%02d-%02d", 1940 + next(65), 1 + next(12), 1 + next(28))
            let enrolled = CLI.day(-(1 + next(300)))
            let letters = Array("bcdfghklmnprstvz")
            let surname = "Qu" + String([letters[i % 16], "a", letters[(i / 16) % 16], "o"])
            roster += "P-\(String(format: "%04d", i)),Ximena \(surname),p\(i)@example.net,,\(birth),\(["female", "male", "other"][next(3)]),,\(zips[next(zips.count)]),,\(zones[next(zones.count)]),\(enrolled),\n"
        }
        let imported = try cli.run(["participant", "import", try cli.write("roster.csv", roster), "-w", cli.workspace])
        try #require(imported.status == 0, "roster import failed: \(imported.output)")
        // Consent governs export: everyone agrees to broad sharing, so k-anonymity decides alone.
        let script = """
            for i in $(seq -f '%04g' 1 \(count)); do
              "$0" consent record --participant "P-$i" --consent-version 1.1 --sharing broad -w "$1" >/dev/null || exit 1
            done
            """
        let (status, output) = try CLI.tool("/bin/bash", ["-c", script, CLI.binary.path, cli.workspace])
        try #require(status == 0, "consent failed: \(output)")
        return cli
    }

    static func json(_ path: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
    }

    static func json(text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Rows of a CSV cohort writes for participants (no quoted commas in these columns).
    static func table(_ path: String) throws -> (header: [String], rows: [[String]]) {
        let lines = try export.text(path).components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let split = { (line: String) in line.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        return (split(try #require(lines.first)), lines.dropFirst().map(split))
    }

    /// Class sizes over `columns` of `table`, counted here.
    static func classSizes(_ table: (header: [String], rows: [[String]]), _ columns: [String]) throws -> [Int] {
        let indices = try columns.map { column in try #require(table.header.firstIndex(of: column), "no column \(column)") }
        var sizes: [[String]: Int] = [:]
        for row in table.rows { sizes[indices.map { row[$0] }, default: 0] += 1 }
        return Array(sizes.values)
    }

    @Test func publishedFileIsKAnonymousOverEveryColumnAndTheManifestSaysSo() throws {
        let cli = try Self.cohort(count: 220)
        defer { cli.cleanup() }
        let published = try Self.export.exported(cli)
        let manifest = try Self.json(published.manifest)
        let k = try #require(manifest["k_anonymity"] as? [String: Any], "the manifest has no k_anonymity")
        let bag = try Self.export.extract(published.archive, into: cli.path("x"))
        let table = try Self.table(bag.appendingPathComponent("data/csv/participants.csv").path)
        let quasiIdentifiers = try #require(k["quasi_identifiers"] as? [String])
        // The QI set is every published participant column, derived ones and the time zone included.
        #expect(quasiIdentifiers == table.header.filter { $0 != "pseudonym" })
        for column in ["sex", "birth_year", "age_band", "zip3", "enrolled_on", "status", "time_zone", "utc_offset"] {
            #expect(quasiIdentifiers.contains(column), "\(column) is published but not a quasi-identifier")
        }
        #expect(table.rows.count >= 200)
        // The attack: link on what an adversary knows; no class may be smaller than k.
        let achieved = try #require(k["achieved_k"] as? Int)
        #expect(achieved >= 3 && k["requested_k"] as? Int == 3)
        for columns in [["sex", "age_band", "zip3"], ["sex", "birth_year", "zip3", "time_zone"], quasiIdentifiers] {
            let smallest = try #require(try Self.classSizes(table, columns).min())
            #expect(smallest >= 3, "a class over \(columns) has \(smallest) participant(s)")
        }
        #expect(try Self.classSizes(table, quasiIdentifiers).min() == achieved)
        #expect(try Self.classSizes(table, quasiIdentifiers).count == k["classes"] as? Int)
        // Generalization is stated, and the values show it.
        let generalized = try #require(k["generalized"] as? [String: String])
        #expect(!generalized.isEmpty)
        if generalized["birth_year"] == "5-year range" || generalized["birth_year"] == "10-year range" {
            let years = try Self.classSizes(table, ["birth_year"]).count
            #expect(years <= 14)
        }
        // The report in the bag says the same as the manifest.
        let report = try Self.json(bag.appendingPathComponent("data/reports/deidentification.json").path)
        let reportK = try #require(report["k_anonymity"] as? [String: Any])
        #expect(reportK["achieved_k"] as? Int == achieved && reportK["quasi_identifiers"] as? [String] == quasiIdentifiers)
    }

    @Test(.enabled(if: DeidRiskCLITests.pythonOrCI, "no .venv/bin/python (run scripts/setup-venv.sh); CI=true runs it anyway"))
    func independentRecountsAgreeWithTheManifestAndTheRiskReport() throws {
        let cli = try Self.cohort(count: 220)
        defer { cli.cleanup() }
        let published = try Self.export.exported(cli)
        let k = try #require(try Self.json(published.manifest)["k_anonymity"] as? [String: Any])
        let columns = try #require(k["quasi_identifiers"] as? [String]).joined(separator: ",")
        let bag = try Self.export.extract(published.archive, into: cli.path("x"))
        let csv = bag.appendingPathComponent("data/csv")

        // 1. A csv-module recount.
        let script = CLI.repoRoot.appendingPathComponent("Tests/interop/recompute_k.py").path
        let (status, out) = try CLI.tool(ExportCLITests.python, [script, csv.appendingPathComponent("participants.csv").path, columns])
        try #require(status == 0, "recompute_k.py: \(out)")
        let recount = try Self.json(text: out)
        #expect(recount["k"] as? Int == k["achieved_k"] as? Int)
        #expect(recount["classes"] as? Int == k["classes"] as? Int)

        // 2. `cohort deid risk` on the archive, without the workspace.
        let risk = try cli.run(["deid", "risk", published.archive, "--format", "json"])
        #expect(risk.status == 0, "\(risk.output)")
        let assessment = try Self.json(text: risk.stdout)
        let measures = try #require(assessment["risk"] as? [String: Any])
        #expect(measures["k"] as? Int == k["achieved_k"] as? Int)
        #expect(measures["classes"] as? Int == recount["classes"] as? Int)
        #expect(assessment["holds"] as? Bool == true)
        let records = try #require(measures["records"] as? Int)
        let uniqueShare = try #require(measures["sample_uniqueness"] as? Double)
        #expect(uniqueShare == Double(try #require(recount["unique"] as? Int)) / Double(records))
        let average = try #require(measures["prosecutor_risk_average"] as? Double)
        #expect(abs(average - Double(try #require(recount["classes"] as? Int)) / Double(records)) < 1e-12)
        // The sensitive field comes from the export's report (the auditor has no protocol).
        let diversity = try #require(measures["l_diversity"] as? [[String: Any]])
        #expect(diversity.compactMap { $0["field"] as? String } == ["medications.text"])

        // 3. pycanon on the same published CSV.
        let pycanon = CLI.repoRoot.appendingPathComponent("Tests/interop/pycanon_check.py").path
        let (pStatus, pOut) = try CLI.tool(ExportCLITests.python, [pycanon, csv.path, columns, "medications.text"])
        try #require(pStatus == 0, "pycanon_check.py: \(pOut)")
        let canon = try Self.json(text: pOut)
        #expect(canon["k"] as? Int == measures["k"] as? Int)
        #expect((canon["l"] as? [String: Int])?["medications.text"] == diversity.first?["l"] as? Int)
    }

    @Test(.enabled(if: DeidRiskCLITests.pythonOrCI, "no .venv/bin/python (run scripts/setup-venv.sh); CI=true runs it anyway"))
    func pycanonAgreesOnKAndLOfADemoExportWithRecords() throws {
        let cli = try Self.export.demo(participants: 16, seed: 3)
        defer { cli.cleanup() }
        let archive = try #require(
            try FileManager.default.contentsOfDirectory(atPath: cli.workspace + "/exports").first { $0.hasSuffix(".tar.gz") })
        let path = cli.workspace + "/exports/" + archive
        let sensitive = ["medications.text", "symptom_logs.kind"]
        let fromArchive = try cli.run(["deid", "risk", path, "--format", "json"] + sensitive.flatMap { ["--sensitive", $0] })
        #expect(fromArchive.status == 0, "\(fromArchive.output)")
        let bag = try Self.export.extract(path, into: cli.path("x"))
        let fromFolder = try cli.run(["deid", "risk", bag.path, "--format", "json"] + sensitive.flatMap { ["--sensitive", $0] })
        let archiveRisk = try #require(try Self.json(text: fromArchive.stdout)["risk"] as? [String: Any])
        let folderRisk = try #require(try Self.json(text: fromFolder.stdout)["risk"] as? [String: Any])
        #expect(NSDictionary(dictionary: archiveRisk).isEqual(to: folderRisk), "archive and bag folder give different reports")

        let columns = try #require(archiveRisk["quasi_identifiers"] as? [String]).joined(separator: ",")
        let pycanon = CLI.repoRoot.appendingPathComponent("Tests/interop/pycanon_check.py").path
        let (status, out) = try CLI.tool(ExportCLITests.python, [pycanon, bag.appendingPathComponent("data/csv").path, columns] + sensitive)
        try #require(status == 0, "pycanon_check.py: \(out)")
        let canon = try Self.json(text: out)
        #expect(canon["k"] as? Int == archiveRisk["k"] as? Int)
        let cohortL = Dictionary(
            uniqueKeysWithValues: try #require(archiveRisk["l_diversity"] as? [[String: Any]]).compactMap { d in
                (d["field"] as? String).map { ($0, d["l"] as? Int ?? -1) }
            })
        #expect(canon["l"] as? [String: Int] == cohortL)
    }

    @Test func aReportThatTheFilesDoNotBearOutExitsOne() throws {
        let cli = try Self.cohort(count: 40)
        defer { cli.cleanup() }
        let published = try Self.export.exported(cli)
        let bag = try Self.export.extract(published.archive, into: cli.path("x"))
        let good = try cli.run(["deid", "risk", bag.path])
        #expect(good.status == 0 && good.stdout.contains("✔"), "\(good.output)")
        #expect(good.stdout.contains("prosecutor risk max") && good.stdout.contains("sample uniqueness"))
        // Append a participant unlike any other: the file no longer has the k the report states.
        let participants = bag.appendingPathComponent("data/csv/participants.csv")
        let header = try Self.table(participants.path).header
        var row = header.map { _ in "" }
        row[0] = "ZZZZZZZZZZZZZZZZ"
        row[1] = "unknown"
        let handle = try FileHandle(forWritingTo: participants)
        try handle.seekToEnd()
        handle.write(Data((row.joined(separator: ",") + "\r\n").utf8))
        try handle.close()
        let bad = try cli.run(["deid", "risk", bag.path, "--format", "json"])
        #expect(bad.status == 1, "\(bad.output)")
        let assessment = try Self.json(text: bad.stdout)
        #expect(assessment["holds"] as? Bool == false)
        #expect((assessment["risk"] as? [String: Any])?["k"] as? Int == 1)
        #expect((assessment["warnings"] as? [String])?.contains { $0.contains("report states k") } == true)
    }

    @Test func helpAndInputErrors() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let help = try cli.run(["deid", "risk", "--help"])
        #expect(help.status == 0)
        for text in ["Examples:", "Exit codes:", "--sensitive", "--format"] { #expect(help.stdout.contains(text), "\(text)") }
        let missing = try cli.run(["deid", "risk", cli.path("nothing.tar.gz")])
        #expect(missing.status == 4, "\(missing.output)")
        let notGzip = try cli.run(["deid", "risk", try cli.write("fake.tar.gz", "not an archive")])
        #expect(notGzip.status != 0 && notGzip.status != 1, "\(notGzip.output)")
        let badField = try cli.run(["deid", "risk", cli.directory.path, "--sensitive", "medications"])
        #expect(badField.status == 2, "\(badField.output)")
    }

    /// `--weather-archive` from the command line: a missing file exits 4, a bad value exits 3
    /// naming file, line and column (never the value); a good archive runs the aligned attack,
    /// which finds nothing to align in an export of the shipped policy (weather dropped).
    @Test func theWeatherArchiveFlagReadsItsFileAndRunsTheAttack() throws {
        let cli = try Self.export.demo()
        defer { cli.cleanup() }
        let published = try Self.export.exported(cli, ["--created-at", CLI.pastTheEmbargo])
        let missing = try cli.run(["deid", "risk", published.archive, "--weather-archive", cli.path("none.csv")])
        #expect(missing.status == 4 && missing.stderr.contains("no such weather archive"), "\(missing.output)")
        let bad = try cli.write("bad.csv", "station,kind,date,value\nNYC,barometric_pressure,2026-01-01,9x9secret\n")
        let refused = try cli.run(["deid", "risk", published.archive, "--weather-archive", bad])
        #expect(refused.status == 3 && refused.stderr.contains("bad.csv:2: value") && !refused.stderr.contains("9x9secret"), "\(refused.output)")
        var rows = "station,kind,date,value\n"
        for day in 1...28 { rows += "NYC,barometric_pressure,2026-02-\(String(format: "%02d", day)),\(1000 + (day * 7) % 23)\n" }
        let good = try cli.run(["deid", "risk", published.archive, "--weather-archive", try cli.write("archive.csv", rows)])
        #expect(good.status == 0 && good.stdout.contains("time attack exogenous") && good.stdout.contains("0 recovered"), "\(good.output)")
    }
}
