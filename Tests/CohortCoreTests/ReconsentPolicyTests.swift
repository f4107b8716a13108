import Testing

@testable import CohortCore

struct ReconsentPolicyTests {
    @Test(arguments: [
        (ReconsentPolicy.major, "1.0", "1.0", false),
        (.major, "1.0", "1.1", false),
        (.major, "1.2.3", "1.9", false),
        (.major, "1.0", "2.0", true),
        (.major, "1.9", "2", true),
        (.major, "2.0", "1.0", true),
        (.major, "1", "1.0", false),
        (.minor, "1.0", "1.0", false),
        (.minor, "1.0", "1.1", true),
        (.minor, "1.1", "1.1.5", false),
        (.minor, "1.0", "2.0", true),
        (.minor, "1", "1.0", false),
        (.minor, "1.0", "1.0.1", false),
        (.any, "1.0", "1.0", false),
        (.any, "1.0", "1.0.1", true),
        (.any, "1.0", "2.0", true),
        (.none, "1.0", "2.0", false),
        (.none, "1.0", "1.1", false),
        (.none, "1.0", "1.0", false),
    ])
    func requiresReconsent(policy: ReconsentPolicy, signed: String, current: String, expected: Bool) {
        #expect(policy.requiresReconsent(signed: signed, current: current) == expected)
    }
}
