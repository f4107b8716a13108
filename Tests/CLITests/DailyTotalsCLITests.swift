import Foundation
import Testing

/// Overlap-free daily totals end to end: an Apple Health export where an iPhone and a Watch count
/// the same walks, imported, then `cohort compliance` under a protocol whose steps rule asks for
/// a daily total (`min_total`).
@Suite(.serialized)
struct DailyTotalsCLITests {
    /// Steps on three days (Berlin, +02:00 in September 2026). By hand, watch before phone:
    /// - 09-02: iPhone 09:00–09:10 800, Watch 09:00–09:10 780 (the same walk) → 780 (plain sum 1580)
    /// - 09-03: iPhone 09:00–09:10 800, Watch 09:05–09:15 700 → 700 + 400 (the iPhone's first half) = 1100
    /// - 09-04: iPhone 09:00–09:10 1200 alone → 1200
    static let export = """
        <HealthData locale="en_GB">
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" device="&lt;&lt;HKDevice: 0x1&gt;, name:iPhone, model:iPhone, hardware:iPhone14,2, software:17.1&gt;" unit="count" startDate="2026-09-02 09:00:00 +0200" endDate="2026-09-02 09:10:00 +0200" value="800"/>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Watch" device="&lt;&lt;HKDevice: 0x2&gt;, name:Apple Watch, model:Watch, hardware:Watch2,4, software:9.1&gt;" unit="count" startDate="2026-09-02 09:00:00 +0200" endDate="2026-09-02 09:10:00 +0200" value="780"/>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" device="&lt;&lt;HKDevice: 0x1&gt;, name:iPhone, model:iPhone, hardware:iPhone14,2, software:17.1&gt;" unit="count" startDate="2026-09-03 09:00:00 +0200" endDate="2026-09-03 09:10:00 +0200" value="800"/>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Watch" device="&lt;&lt;HKDevice: 0x2&gt;, name:Apple Watch, model:Watch, hardware:Watch2,4, software:9.1&gt;" unit="count" startDate="2026-09-03 09:05:00 +0200" endDate="2026-09-03 09:15:00 +0200" value="700"/>
         <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Phone" device="&lt;&lt;HKDevice: 0x1&gt;, name:iPhone, model:iPhone, hardware:iPhone14,2, software:17.1&gt;" unit="count" startDate="2026-09-04 09:00:00 +0200" endDate="2026-09-04 09:10:00 +0200" value="1200"/>
        </HealthData>

        """

    /// Days met of the steps rule for P-0001 as of 2026-09-05 (09-01…09-04 counted), with `rule`
    /// as the protocol's steps rule and `priority` as its source_priority line.
    static func daysMet(rule: String, priority: String = "") throws -> (met: Int, expected: Int) {
        let cli = try CLI()
        defer { cli.cleanup() }
        try #require(try cli.run(["protocol", "examples", "--out", "."], in: cli.directory).status == 0)
        let file = cli.directory.appendingPathComponent("protocols/active-living.yaml")
        var text = try String(contentsOf: file, encoding: .utf8)
        let original = "      kinds: [steps]\n      min_per_day: 1\n"
        try #require(text.contains(original))
        text = text.replacingOccurrences(of: original, with: "      kinds: [steps]\n\(rule)\n") + priority
        try text.write(to: file, atomically: true, encoding: .utf8)
        let initialized = try cli.run(["init", "-w", "ws", "--protocol", "protocols/active-living.yaml"], in: cli.directory)
        try #require(initialized.status == 0, "\(initialized.output)")
        let ws = cli.directory.appendingPathComponent("ws").path
        let roster = try cli.write("roster.csv", CLI.rosterHeader + "P-0001,Ann Example,,,1980-02-29,female,,02139,,Europe/Berlin,2026-09-01,\n")
        try #require(try cli.run(["participant", "import", roster, "-w", ws]).status == 0)
        try #require(try cli.run(["consent", "record", "--sharing", "broad", "--participant", "P-0001", "--version", "1.0", "--signed-at", "2026-09-01T12:00:00Z", "-w", ws]).status == 0)
        let imported = try cli.run(["data", "import", try cli.write("export.xml", export), "--participant", "P-0001", "-w", ws])
        try #require(imported.status == 0, "\(imported.output)")
        let r = try cli.run(["compliance", "--as-of", "2026-09-05", "--format", "json", "-w", ws])
        try #require(r.status == 0, "\(r.output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let participant = try #require((json["participants"] as? [[String: Any]])?.first)
        let result = try #require((participant["rules"] as? [[String: Any]])?.first)
        return (try #require(result["days_met"] as? Int), try #require(result["days_expected"] as? Int))
    }

    @Test func aDailyStepsTotalCountsTheSameWalkOnce() throws {
        // 780, 1100, 1200 against 1000: two days; a plain sum (1580, 1500, 1200) would meet three.
        let result = try Self.daysMet(rule: "      min_total: 1000")
        #expect(result.expected == 4)
        #expect(result.met == 2)
    }

    @Test func theProtocolsSourcePriorityDecidesWhichDeviceCounts() throws {
        // iPhone first: 800, 800 + 350 (the watch's uncovered last 5 minutes) = 1150, 1200;
        // watch first: 780, 1100, 1200. At 1,151 both meet one day; at 1,100 iPhone-first meets two.
        #expect(try Self.daysMet(rule: "      min_total: 1151", priority: "source_priority: [iPhone]\n").met == 1)
        #expect(try Self.daysMet(rule: "      min_total: 1151").met == 1)  // watch first: 780, 1100, 1200
        #expect(try Self.daysMet(rule: "      min_total: 1100", priority: "source_priority: [iPhone]\n").met == 2)
    }

    /// The export's `daily_totals` table (CSV and NDJSON) holds the same overlap-free totals,
    /// per participant and (shifted) day, beside the raw samples in `biometrics`.
    @Test func theExportPublishesDailyTotalsBesideTheSamples() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        try ActiveLivingCLITests.workspace(cli, cli.workspace)
        for code in ActiveLivingCLITests.codes {
            let r = try cli.ws("data", "import", try cli.write("export-\(code).xml", Self.export), "--participant", code)
            try #require(r.status == 0, "\(r.output)")
        }
        // Dated 200 days from now: past the shipped embargo, so every sample and total is published whatever the shift.
        let export = try cli.ws("export", "--recipient", "lab-b", "--formats", "csv,json", "--no-archive", "--out", cli.path("out"), "--created-at", CLI.pastTheEmbargo)
        try #require(export.status == 0, "\(export.output)")
        let files = FileManager.default.enumerator(atPath: cli.path("out"))?.compactMap { $0 as? String } ?? []
        let csv = try #require(files.first { $0.hasSuffix("csv/daily_totals.csv") })
        let rows = try ActiveLivingCLITests.csvRows(URL(fileURLWithPath: cli.path("out")).appendingPathComponent(csv))
        #expect(rows.count == 9, "\(rows)")
        for pseudonym in Set(rows.compactMap { $0["pseudonym"] }) {
            let mine = rows.filter { $0["pseudonym"] == pseudonym }.sorted { ($0["date"] ?? "") < ($1["date"] ?? "") }
            // By hand (watch first): 780 (not 1580), 1100, 1200, on three consecutive days.
            #expect(mine.map { $0["value"] } == ["780", "1100", "1200"], "\(mine)")
            #expect(mine.map { $0["samples"] } == ["1", "2", "1"] && mine.allSatisfy { $0["kind"] == "steps" && $0["unit"] == "{steps}" })
        }
        let ndjson = try #require(files.first { $0.hasSuffix("json/daily_totals.ndjson") })
        let lines = try String(contentsOfFile: URL(fileURLWithPath: cli.path("out")).appendingPathComponent(ndjson).path, encoding: .utf8)
        #expect(lines.split(separator: "\n").count == 9)
        // The raw samples are still all there.
        let biometrics = try #require(files.first { $0.hasSuffix("csv/biometrics.csv") })
        let samples = try ActiveLivingCLITests.csvRows(URL(fileURLWithPath: cli.path("out")).appendingPathComponent(biometrics))
        #expect(samples.filter { $0["kind"] == "steps" }.count == 15)
    }
}
