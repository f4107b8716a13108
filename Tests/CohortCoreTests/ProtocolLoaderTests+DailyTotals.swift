import CohortCore
import Foundation
import Testing

/// `source_priority` and compliance rules with `min_total` (overlap-free daily totals).
struct ProtocolLoaderDailyTotalsTests {
    /// The fixture collecting steps, with the rule at lines 22–25 replaced by `rule`.
    static func text(rule: String, extra: String = "") -> String {
        ProtocolFixture.text([19: "  symptom_log: [pain]\n  biometric: [steps]", 22: rule, 23: "", 24: "", 25: ""]) + extra
    }

    @Test func aStepsTotalRuleAndTheSourcePriorityLoad() throws {
        let text = Self.text(
            rule: "    - id: walk\n      kinds: [steps]\n      min_total: 5000\n      threshold: 0.8",
            extra: "source_priority: [Apple Watch, iPhone, Withings]\n")
        let p = try ProtocolLoader.parse(text, file: "t.yaml", templateRoot: nil).studyProtocol
        let rule = try #require(p.compliance.rules.first)
        #expect(rule.minTotal == 5000 && rule.minPerDay == 1)
        #expect(rule.description == "a daily total of at least 5000 {steps}")
        #expect(p.sourcePriority.order == ["Apple Watch", "iPhone", "Withings"])
        // The pinned form carries both and reads back the same.
        let decoded = try JSONDecoder().decode(StudyProtocol.self, from: try JSONEncoder().encode(p))
        #expect(decoded.sourcePriority == p.sourcePriority && decoded.compliance.rules == p.compliance.rules)
    }

    @Test(arguments: [
        ("    - id: walk\n      kinds: [steps, pain]\n      min_total: 5000\n      threshold: 0.8", "compliance.rules[0].min_total"),
        ("    - id: walk\n      data_type: symptom_log\n      min_total: 5\n      threshold: 0.8", "compliance.rules[0].min_total"),
        ("    - id: walk\n      kinds: [steps]\n      min_total: 5000\n      min_per_day: 1\n      threshold: 0.8", "compliance.rules[0].min_per_day"),
        ("    - id: walk\n      kinds: [steps]\n      threshold: 0.8", "compliance.rules[0].min_per_day"),
    ])
    func misusedTotalsAreNamed(rule: String, keyPath: String) {
        let problems = ProtocolFixture.problems(Self.text(rule: rule))
        #expect(!problems.errors(at: keyPath).isEmpty, "\(problems)")
    }

    @Test func aSourceListedTwiceIsAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text() + "source_priority: [iPhone, iphone]\n")
        #expect(problems.errors(at: "source_priority[1]").count == 1)
    }
}
