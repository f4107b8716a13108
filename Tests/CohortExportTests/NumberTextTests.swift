import Testing

@testable import CohortExport

struct NumberTextTests {
    @Test(arguments: [
        (72.0, "72"), (72.5, "72.5"), (0.1, "0.1"), (-0.0, "0"), (0.0, "0"), (7.25, "7.25"), (12034.0, "12034"),
        (0.00001, "0.00001"), (1.5e-7, "0.00000015"), (-2.5e-6, "-0.0000025"), (1e16, "10000000000000000"),
        (-2.5e20, "-250000000000000000000"), (123456789.125, "123456789.125"), (1013.25, "1013.25"), (-60.0, "-60"),
    ])
    func writesShortestPlainDecimal(value: Double, expected: String) {
        #expect(NumberText.format(value) == expected)
    }

    @Test(arguments: [0.1, 1.0 / 3.0, 2.0 / 3.0 * 1e-9, 98765.4321, 1e-300, 5e15 + 0.5])
    func roundTripsWithoutExponent(value: Double) {
        let text = NumberText.format(value)
        #expect(!text.contains("e") && !text.contains("E"))
        #expect(Double(text) == value)
    }
}
