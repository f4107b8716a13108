import CohortCore
import Foundation
import Testing

@testable import CohortExport

struct FHIRTests {
    /// Quantities now carry `NumberText` instead of a parsed `Decimal`: the text must be what
    /// the `Decimal` printed before, so FHIR output does not change.
    @Test func numberTextIsWhatTheDecimalPrinted() {
        var generator = SeededRandom(seed: 3)
        var values: [Double] = [0, -0.0, 1, -1, 0.5, 72, 1013.25, 0.1, 0.2, 0.3, 1e-15, 9.99e14, -9.99e14, 123_456_789.123, 36.6, 98.6, 0.001]
        for exponent in -15...14 {
            for _ in 0..<40 {
                let mantissa = Double.random(in: 1..<10, using: &generator)
                values.append(mantissa * pow(10, Double(exponent)))
                values.append(-(mantissa * pow(10, Double(exponent))).rounded())
                values.append((mantissa * 100).rounded() / 100 * pow(10, Double(exponent)))
            }
        }
        for value in values {
            let before = FHIR.decimal(value).map { "\($0)" }
            #expect(FHIR.numberText(value) == before, "\(value)")
        }
    }

    @Test func numbersOutsideThePlainRangeStillTakeTheDecimal() {
        for value in [1e20, 1.5e-20, 1e300, Double.leastNonzeroMagnitude, Double.greatestFiniteMagnitude] {
            #expect(FHIR.numberText(value) == FHIR.decimal(value).map { "\($0)" })
        }
        #expect(FHIR.numberText(.nan) == nil)
        #expect(FHIR.numberText(.infinity) == nil)
    }

    /// A quantity made from number text encodes through `JSONEncoder` as the fast writer
    /// writes it.
    @Test(arguments: ["72", "0.5", "-3.25", "1013.2", "0", "0.000000000000001", "123456789012345"])
    func quantityFromTextEncodesLikeTheWriter(text: String) throws {
        let quantity = FHIR.Quantity(numberText: text, unit: "/min", system: FHIR.ucum, code: "/min")
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var json = FHIRJSON()
        quantity.write(to: &json)
        #expect(json.bytes == Array(try encoder.encode(quantity)))
        #expect(quantity.value == Decimal(string: text))
    }
}
