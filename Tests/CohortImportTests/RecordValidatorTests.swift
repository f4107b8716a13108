import Foundation
import Testing

@testable import CohortImport

struct RecordValidatorTests {
    static func number(_ text: String) -> Double? {
        Array(text.utf8).withUnsafeBufferPointer { RecordValidator.number($0) }
    }

    static let vectors = [
        "72", "72.5", "-3.25", "+4", "0", "-0", "-0.0", "0.1", "0.3", "1.15", "007", "123456789012345", "1234567890123456", "99999999999999.9",
        "0.000000000000001", "3.141592653589793", "1e2", "1E-3", ".5", "5.", "inf", "nan", "0x1p3", " 5", "5 ", "", "-", "+", "1.2.3", "1,5",
        "12a", "\u{0}", "٣",
    ]

    @Test(arguments: vectors)
    func readsNumbersExactlyAsDoubleFromStringDoes(text: String) {
        let expected = Double(text)
        let got = Self.number(text)
        #expect(got?.bitPattern == expected?.bitPattern || (got?.isNaN == true && expected?.isNaN == true), "\(text)")
        #expect((got == nil) == (expected == nil), "\(text)")
    }

    @Test func randomDecimalsReadExactly() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        for _ in 0..<20_000 {
            let integerDigits = Int(next() % 10) + 1
            let fractionDigits = Int(next() % 8)
            var text = next() % 4 == 0 ? "-" : ""
            for _ in 0..<integerDigits { text += String(next() % 10) }
            if fractionDigits > 0 {
                text += "."
                for _ in 0..<fractionDigits { text += String(next() % 10) }
            }
            #expect(Self.number(text)?.bitPattern == Double(text)?.bitPattern, "\(text)")
        }
    }
}
