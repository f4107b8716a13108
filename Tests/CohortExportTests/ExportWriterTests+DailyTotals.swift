import CohortCore
import Foundation
import Testing

@testable import CohortExport

/// `daily_totals`: the overlap-free totals of the published records, ranked by the sources they
/// had before de-identification (the protocol's `source_priority` names stored sources).
struct ExportWriterDailyTotalsTests {
    /// One participant, steps on 2025-03-11 at +01:00, published sources generalized:
    /// iPhone 09:00–09:10 1000 and Watch 09:05–09:15 600 (the two overlap 09:05–09:10).
    static func export(priority: [String], ranking: Bool, format: ExportFormat = .csv) throws -> String {
        var context = ExportFixture.context(formats: [format])
        context.studyProtocol.sourcePriority = SourcePriority(priority)
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        let writer = try ExportWriter(dataDirectory: root.appendingPathComponent("data"), context: context)
        let entry = try #require(ExportFixture.cohort.first)
        try writer.beginParticipant(entry.participant, consents: entry.consents)
        for (from, to, value, published, stored) in [("09:00", "09:10", 1000.0, "phone", "iPhone14,5"), ("09:05", "09:15", 600.0, "smartwatch", "Watch6,2")] {
            var r = DeidentifiedRecord(pseudonym: entry.participant.pseudonym, kind: .steps)
            r.start = ExportFixture.ts("2025-03-11T\(from):00+01:00")
            r.end = ExportFixture.ts("2025-03-11T\(to):00+01:00")
            r.value = value
            r.unit = "{steps}"
            r.source = published
            try writer.write(r, rankingSource: ranking ? stored : nil)
        }
        _ = try writer.finish(deidentificationSummary: nil)
        let file = format == .csv ? "data/csv/daily_totals.csv" : "data/fhir/Observation.ndjson"
        return try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
    }

    /// Watch first (the default): 600 + the iPhone's uncovered half, 500 = 1100.
    @Test func watchFirstByDefault() throws {
        #expect(try Self.export(priority: [], ranking: true) == "pseudonym,kind,date,value,unit,samples\r\nK7QF2M4XRB6TNV3D,steps,2025-03-11,1100,{steps},2\r\n")
    }

    /// `source_priority: [iPhone]` names a stored source: 1000 + the watch's uncovered half, 300 = 1300.
    /// Ranked by the published (generalized) sources instead, the list would match nothing and the
    /// watch would win (1100): the stored source is what ranks.
    @Test func theProtocolsPriorityRanksTheStoredSources() throws {
        #expect(try Self.export(priority: ["iPhone"], ranking: true).hasSuffix(",steps,2025-03-11,1300,{steps},2\r\n"))
        #expect(try Self.export(priority: ["iPhone"], ranking: false).hasSuffix(",steps,2025-03-11,1100,{steps},2\r\n"))
    }

    /// FHIR: one Observation per day and kind, coded `daily_total_steps` in cohort's local code
    /// system (never the kind's own LOINC code), `effectivePeriod` the published local day.
    @Test func fhirHasOneObservationPerDayWithTheDayAsItsPeriod() throws {
        let lines = try Self.export(priority: [], ranking: true, format: .fhir).split(separator: "\n")
        #expect(lines.count == 3, "two samples and one daily total")
        let total = try #require(lines.first { $0.contains("\"daily_total_steps\"") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(total.utf8)) as? [String: Any])
        let period = try #require(object["effectivePeriod"] as? [String: String])
        #expect(period == ["start": "2025-03-11T00:00:00+01:00", "end": "2025-03-12T00:00:00+01:00"])
        let quantity = try #require(object["valueQuantity"] as? [String: Any])
        #expect(quantity["value"] as? Double == 1100 && quantity["code"] as? String == "{steps}")
        let coding = try #require(((object["code"] as? [String: Any])?["coding"] as? [[String: Any]])?.first)
        #expect(coding["system"] as? String == Coding.localSystem)
    }
}
