import CohortCore
import Testing

@testable import CohortExport

struct FHIRMapperTests {
    @Test func aBirthYearRangeIsOmittedFromPatientAndLabelledRedacted() {
        let mapper = FHIRMapper(context: ExportFixture.context(policy: TableLayoutTests.kPolicy))
        let patient = mapper.patient(TableLayoutTests.generalizedRow)
        #expect(patient.birthDate == nil)
        #expect(patient.meta?.security?.contains { $0.code == "REDACTED" } == true)
        var exact = TableLayoutTests.generalizedRow
        exact.birthYearRange = nil
        exact.birthYear = 1984
        #expect(mapper.patient(exact).birthDate == "1984")
    }

    @Test func periodsThatFHIRCanExpressAreKeptQuartersAreOmitted() {
        let mapper = FHIRMapper(context: ExportFixture.context(policy: TableLayoutTests.kPolicy))
        let subject = mapper.researchSubject(TableLayoutTests.generalizedRow, consentIDs: [], consents: [], style: .bulk)
        #expect(subject.status == "withdrawn")
        #expect(subject.period?.start == nil)  // 2025-Q1 has no FHIR date form
        #expect(subject.period?.end == "2025-05")
        #expect(FHIRMapper.partialDate("2025") == "2025" && FHIRMapper.partialDate("2025-03") == "2025-03")
        #expect(FHIRMapper.partialDate("2025-Q1") == nil && FHIRMapper.partialDate("1980–1984") == nil)
    }
}
