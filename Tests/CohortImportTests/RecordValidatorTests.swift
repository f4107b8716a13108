import CohortCore
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

/// Records outside a participant's enrolment window carry a typed cause, so callers count them
/// by cause and never by the message's wording.
struct RecordValidatorCauseTests {
    struct Subjects: RecordSubjects {
        struct Admitted: RecordAdmission {
            func refusal(at start: Timestamp) -> CohortError? { nil }
        }
        let participant = Participant(id: UUID(), code: "P-0001", sex: .female, timeZone: "UTC", enrolledOn: CivilDate(iso: "2025-03-01") ?? CivilDate(daysSinceEpoch: 0))
        var enrolledParticipants: [Participant] { [participant] }
        func admissions(studyProtocol: StudyProtocol) throws -> [UUID: any RecordAdmission] { [participant.id: Admitted()] }
    }

    @Test(arguments: [
        ("2025-02-27T12:00:00Z", CohortError.Cause.recordBeforeEnrollment),
        ("2025-04-15T12:00:00Z", CohortError.Cause.recordAfterStudyPeriod),
    ])
    func aRecordOutsideTheEnrolmentWindowSaysWhichSideByItsCause(start: String, cause: CohortError.Cause) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let loaded = try ProtocolLoader.load(contentsOf: root.appendingPathComponent("protocols/minimal.yaml"))
        let validator = try RecordValidator(
            directory: Subjects(), studyProtocol: loaded.studyProtocol, file: "rows.csv", now: Date(timeIntervalSince1970: 1_800_000_000))
        let row = ["participant": "P-0001", "kind": "pain", "start": start, "value": "3"]
        let error = #expect(throws: CohortError.self) { try RecordFields.with(row) { fields in try validator.validate(fields, line: 2) } }
        #expect(error?.cause == cause)
        #expect(error?.location?.field == "start")
    }
}
