import CohortCore
import Foundation
import Testing

@testable import CohortCompliance

/// `min_total` rules: a day meets the rule when the kind's overlap-free daily total reaches the
/// minimum, so an iPhone and a Watch counting the same steps do not meet it twice over.
struct ComplianceDailyTotalsTests {
    static let walk = ComplianceRule(
        id: "walk", description: "Walk 1,000 steps a day", dataType: nil, kinds: [.steps], minPerDay: 1, threshold: 0.5, minTotal: 1000)

    /// Two days. Day 1: iPhone 09:00–09:10 600 steps, Watch 09:00–09:10 590 steps (the same walk):
    /// overlap-free 590 (the watch ranks first), a plain sum 1190. Day 2: iPhone 09:00–09:10 600,
    /// Watch 12:00–12:10 500 (different walks): 1100.
    static func report(_ priority: [String] = [], feedSamples: Bool = true) throws -> ComplianceReport.RuleResult {
        var p = Fixture.studyProtocol(rules: [walk])
        p.sourcePriority = SourcePriority(priority)
        let subject = try Fixture.subject(enrolled: "2025-06-10")
        var engine = ComplianceEngine(studyProtocol: p, asOf: try Fixture.at("2025-06-12 12:00", subject.timeZone).date)
        try engine.add(participant: subject)
        let samples: [(String, String, Double, String)] = [
            ("2025-06-10 09:00", "2025-06-10 09:10", 600, "iPhone14,5"), ("2025-06-10 09:00", "2025-06-10 09:10", 590, "Watch6,2"),
            ("2025-06-11 09:00", "2025-06-11 09:10", 600, "iPhone14,5"), ("2025-06-11 12:00", "2025-06-11 12:10", 500, "Watch6,2"),
        ]
        for (start, end, value, source) in samples {
            let s = try Fixture.at(start, subject.timeZone), e = try Fixture.at(end, subject.timeZone)
            engine.add(recordOf: subject.id, kind: .steps, start: s)
            if feedSamples { engine.add(sampleOf: subject.id, kind: .steps, start: s, end: e, value: value, source: source) }
        }
        #expect(engine.needsSamples && engine.countsTotals(of: .steps) && !engine.countsTotals(of: .pain))
        return try #require(engine.report().participants.first?.result(for: "walk"))
    }

    @Test func theDailyTotalCountsEachMinuteOnce() throws {
        let result = try Self.report()
        #expect(result.daysExpected == 2)
        #expect(result.daysMet == 1, "day 1 has 590 steps once the overlap is resolved, not 1190")
        #expect(result.missedLastClosedDay == false)
    }

    @Test func theProtocolsSourcePriorityDecides() throws {
        // iPhone first: day 1 counts 600 (still below 1000); day 2 is unchanged.
        #expect(try Self.report(["iPhone"]).daysMet == 1)
    }

    @Test func recordsWithoutValuesMeetNothing() throws {
        // Starts alone (the old path) never meet a min_total rule: the total is what counts.
        #expect(try Self.report(feedSamples: false).daysMet == 0)
    }
}
