import CohortCore
import Testing

@testable import CohortDeid

struct SafeHarborTests {
    @Test(arguments: ["036", "059", "063", "102", "203", "556", "692", "790", "821", "823", "830", "831", "878", "879", "884", "890", "893"])
    func restrictedZIP3BecomesZeros(prefix: String) {
        #expect(SafeHarbor.zip3(prefix + "42") == "000")
        #expect(SafeHarbor.zip3(prefix + "42-1234") == "000")
    }

    @Test(arguments: [("10001", "100"), ("62704", "627"), ("02139-4307", "021"), ("03601", "000")])
    func zip3KeepsOrdinaryPrefixes(zip: String, expected: String) {
        #expect(SafeHarbor.zip3(zip) == expected)
    }

    @Test func malformedZIPGivesNothing() {
        #expect(SafeHarbor.zip3("AB1") == nil)
        #expect(SafeHarbor.zip3("12") == nil)
    }

    @Test(arguments: [(17, "<18"), (18, "18–<30"), (44, "30–<45"), (65, "65–<90"), (89, "65–<90"), (90, "90+"), (104, "90+")])
    func ageBands(age: Int, expected: String) {
        #expect(SafeHarbor.ageBand(age, bins: [18, 30, 45, 65]) == expected)
    }

    @Test func binsAboveNinetyCannotSplitTheTopBand() {
        #expect(SafeHarbor.ageBand(95, bins: [18, 65, 100]) == "90+")
        #expect(SafeHarbor.ageBand(89, bins: [18, 65, 100]) == "65–<90")
    }

    @Test func numericLabels() {
        #expect(SafeHarbor.label(7, edges: [0, 5, 10]) == "5–<10")
        #expect(SafeHarbor.label(10, edges: [0, 5, 10]) == "≥10")
        #expect(SafeHarbor.label(-1, edges: [0, 5, 10]) == "<0")
        #expect(SafeHarbor.label(2.6, edges: [0, 2.5, 5]) == "2.5–<5")
    }
}
