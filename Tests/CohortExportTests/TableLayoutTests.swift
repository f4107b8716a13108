import CohortCore
import Testing

@testable import CohortExport

struct TableLayoutTests {
    static var kPolicy: DeidentificationPolicy {
        var policy = ExportFixture.fullPolicy
        policy.kAnonymity = .init(k: 5, quasiIdentifiers: [])
        return policy
    }

    static var generalizedRow: DeidentifiedParticipant {
        var row = DeidentifiedParticipant(pseudonym: "K7QF2M4XRB6TNV3D")
        row.sex = .female
        row.birthYearRange = "1980–1984"
        row.zip3 = "0**"
        row.enrollmentPeriod = "2025-Q1"
        row.status = .stopped
        row.withdrawalPeriod = "2025-05"
        row.utcOffset = "-05:00"
        return row
    }

    @Test func generalizedValuesArePublishedAsText() {
        let layout = TableLayout.participants(policy: Self.kPolicy)
        let cells = Dictionary(uniqueKeysWithValues: zip(layout.columns.map(\.name), layout.row(Self.generalizedRow)))
        #expect(cells["birth_year"] == .string("1980–1984"))
        #expect(cells["enrolled_on"] == .string("2025-Q1"))
        #expect(cells["withdrawn_at"] == .string("2025-05"))
        #expect(cells["zip3"] == .string("0**"))
        #expect(cells["utc_offset"] == .string("-05:00"))
        // Under k-anonymity the columns that may be generalized are typed string, whatever the rows hold.
        for name in ["birth_year", "enrolled_on", "withdrawn_at"] {
            #expect(layout.columns.first { $0.name == name }?.type == .string, "\(name)")
        }
        var exact = DeidentifiedParticipant(pseudonym: "W3HZ7P5LCA2YUE7G")
        exact.birthYear = 1984
        let exactCells = Dictionary(uniqueKeysWithValues: zip(layout.columns.map(\.name), layout.row(exact)))
        #expect(exactCells["birth_year"] == .string("1984"))
    }

    @Test func withoutKAnonymityColumnsKeepTheirTypes() {
        let layout = TableLayout.participants(policy: ExportFixture.fullPolicy)
        #expect(layout.columns.first { $0.name == "birth_year" }?.type == .year)
        #expect(layout.columns.first { $0.name == "enrolled_on" }?.type == .date)
        var row = DeidentifiedParticipant(pseudonym: "W3HZ7P5LCA2YUE7G")
        row.birthYear = 1984
        let cells = Dictionary(uniqueKeysWithValues: zip(layout.columns.map(\.name), layout.row(row)))
        #expect(cells["birth_year"] == .integer(1984))
    }
}
