import Foundation
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

    /// Every Observation kind has a category from the standard observation-category system
    /// (environment readings as social-history, plus cohort's own `environment` code); only
    /// medication doses, which are MedicationStatements, have none.
    @Test(arguments: RecordKind.allCases)
    func everyObservationHasAStandardCategory(kind: RecordKind) {
        let category = FHIRMapper.category(kind)
        guard kind != .medicationDose else {
            #expect(category == nil)
            return
        }
        #expect(category?.first?.system == "http://terminology.hl7.org/CodeSystem/observation-category")
        let standardCodes: Set<String> = ["social-history", "vital-signs", "imaging", "laboratory", "procedure", "survey", "exam", "therapy", "activity"]
        #expect(category?.first?.code.map { standardCodes.contains($0) } == true)
        if kind.dataType == .environment {
            #expect(category?.map(\.code) == ["social-history", "environment"])
        }
    }

    /// The activity family is `activity`, body composition `vital-signs`, intake `social-history`
    /// with cohort's `intake` code; a workout carries its activity type as a component and its
    /// duration as a UCUM `min` quantity.
    @Test func newKindsHaveTheirCategoriesAndAWorkoutItsActivityType() throws {
        for kind in DataType.activity.kinds { #expect(FHIRMapper.category(kind)?.map(\.code) == ["activity"], "\(kind)") }
        for kind in [RecordKind.bodyFatPercentage, .bmi] { #expect(FHIRMapper.category(kind)?.map(\.code) == ["vital-signs"]) }
        for kind in DataType.intake.kinds { #expect(FHIRMapper.category(kind)?.map(\.code) == ["social-history", "intake"]) }
        let mapper = FHIRMapper(context: ExportFixture.context())
        var record = DeidentifiedRecord(pseudonym: "K7QF2M4XRB6TNV3D", kind: .workout)
        record.start = ExportFixture.ts("2025-03-11T18:00:00+01:00")
        record.end = ExportFixture.ts("2025-03-11T18:30:30+01:00")
        record.value = 30.5
        record.text = "running"
        guard case .observation(let observation) = mapper.resource(record, ordinal: 0, subject: FHIR.Reference(), ids: ResourceID.Builder()) else {
            Issue.record("a workout must map to an Observation")
            return
        }
        #expect(observation.code.coding?.first?.code == "workout")
        #expect(observation.valueQuantity?.code == "min" && observation.valueQuantity?.system == "http://unitsofmeasure.org")
        #expect(observation.component?.count == 1)
        #expect(observation.component?.first?.valueString == "running")
        #expect(observation.component?.first?.code.coding?.first?.code == "workout_activity")
    }

    /// A medication the protocol names gets its RxNorm coding (whatever the case it was logged
    /// in), with the logged name kept as text; one it does not name stays text only.
    @Test(arguments: [("ibuprofen", "5640"), ("Ibuprofen ", "5640"), ("NAPROXEN", "7258"), ("mystery pill", nil)] as [(String, String?)])
    func medicationsNamedInTheProtocolCarryRxNorm(name: String, code: String?) throws {
        let mapper = FHIRMapper(context: ExportFixture.context())
        var record = DeidentifiedRecord(pseudonym: "K7QF2M4XRB6TNV3D", kind: .medicationDose)
        record.text = name
        record.value = 400
        guard case .medicationStatement(let statement) = mapper.resource(record, ordinal: 0, subject: FHIR.Reference(), ids: ResourceID.Builder()) else {
            Issue.record("a medication dose must map to a MedicationStatement")
            return
        }
        #expect(statement.medicationCodeableConcept.text == name)
        if let code {
            #expect(statement.medicationCodeableConcept.coding == [FHIR.Coding(system: "http://www.nlm.nih.gov/research/umls/rxnorm", code: code, display: name.trimmingCharacters(in: .whitespaces).lowercased())])
        } else {
            #expect(statement.medicationCodeableConcept.coding == nil)
        }
    }
}
