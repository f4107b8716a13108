import Foundation
import Testing

@testable import CohortCore

struct ProtocolLoaderTests {
    // MARK: Shipped protocols

    @Test(arguments: [("minimal", "minimal-pain"), ("axspa-wearables", "axspa-wearables"), ("migraine-risk", "migraine-risk")])
    func shippedProtocolLoads(file: String, id: String) throws {
        let url = repositoryRoot.appendingPathComponent("protocols/\(file).yaml")
        let loaded = try ProtocolLoader.load(contentsOf: url)
        #expect(loaded.studyProtocol.id == id)
        #expect(loaded.studyProtocol.schema == StudyProtocol.schemaID)
        // Shipped protocols name every field (issue 17): loading them warns about nothing.
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings.map(\.message))")
        #expect(loaded.source == url)
        #expect(!loaded.studyProtocol.dataTypes.isEmpty)
        #expect(!loaded.studyProtocol.compliance.rules.isEmpty)
        // The pinned form decodes back to the same protocol.
        let decoded = try JSONDecoder().decode(StudyProtocol.self, from: try loaded.canonicalJSON())
        #expect(decoded == loaded.studyProtocol)
    }

    @Test func axspaProtocolHasEveryFieldRuled() throws {
        let loaded = try ProtocolLoader.load(contentsOf: repositoryRoot.appendingPathComponent("protocols/axspa-wearables.yaml"))
        let p = loaded.studyProtocol
        #expect(loaded.warnings.isEmpty, "\(loaded.warnings)")
        #expect(p.revision == 1)
        #expect(p.durationDays == 90)
        #expect(p.irb.expires == CivilDate(year: 2027, month: 12, day: 31))
        #expect(p.dataTypes[.biometric] == [.heartRate, .restingHeartRate, .hrvSDNN, .steps, .sleepDuration])
        #expect(p.deidentification.dateShift == .init(maxDays: 182, wholeWeeks: false, embargoDays: 182, exogenous: .drop, maskHolidays: true))
        #expect(p.deidentification.kAnonymity?.k == 3)
        #expect(p.deidentification.fields["participant.age"]?.bins == [18, 30, 40, 50, 60, 70, 80, 90])
        #expect(p.deidentification.fields["records.source"]?.map?["Apple Watch"] == "smartwatch")
        #expect(p.deidentification.rule(table: "biometric", field: "note")?.transform == .scrub)
        #expect(p.deidentification.rule(table: "medication_log", field: "text")?.transform == .scrub)  // medication text is free text (issue 26)
        #expect(p.consent.reconsent == .major)
    }

    /// The fixture is the shipped minimal protocol but for its date_shift, kept to one line so
    /// the line numbers the tests name stay put; the shipped one shifts by days with an embargo
    /// (issue 27).
    @Test func fixtureIsTheMinimalProtocol() throws {
        let complete = ProtocolFixture.text([
            28: "    max_days: 30\n    whole_weeks: false\n    embargo_days: 30\n    holidays: mask",
            37: ([ProtocolFixture.lines[36]] + ProtocolFixture.minimalExplicitDrops).joined(separator: "\n"),
        ])
        let fixture = try ProtocolLoader.parse(complete, file: "test.yaml", templateRoot: repositoryRoot)
        let shipped = try ProtocolLoader.load(contentsOf: repositoryRoot.appendingPathComponent("protocols/minimal.yaml"))
        #expect(fixture.studyProtocol == shipped.studyProtocol)
        #expect(try fixture.canonicalJSON() == shipped.canonicalJSON())
    }

    // MARK: Syntax and types

    @Test func malformedYAMLNamesTheLine() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([10: "  approval_number: IRB: 0001"]))
        #expect(problems.count == 1)
        let problem = problems.first
        #expect(problem?.severity == .error)
        #expect(problem?.line == 10)
        #expect(problem?.file == "test.yaml")
        #expect(problem?.message.contains("malformed YAML") == true)
    }

    @Test func tabIndentationIsASyntaxErrorOnItsLine() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([7: "\tname: \"Dr. Jo Example\""]))
        #expect(problems.count == 1)
        #expect(problems.first?.line == 7)
        #expect(problems.first?.message.contains("malformed YAML") == true)
    }

    @Test func duplicateKeysAreAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([31: "    participant.sex: keep\n    participant.sex: drop"]))
        #expect(problems.count == 1)
        #expect(problems.first?.line == 31)
        #expect(problems.first?.message.contains("duplicate keys: participant.sex") == true)
    }

    @Test func emptyValuesAreErrors() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([4: "title:", 5: "institution: ~"]))
        #expect(problems.errors(at: "title").first?.line == 4)
        #expect(problems.errors(at: "title").first?.message == "must not be empty")
        #expect(problems.errors(at: "institution").first?.line == 5)
    }

    @Test func topLevelMustBeAMapping() {
        let problems = ProtocolFixture.problems("- a\n- b\n")
        #expect(problems.first?.line == 1)
        #expect(problems.first?.message.contains("expected a mapping") == true)
    }

    @Test func emptyFileIsAnError() {
        let problems = ProtocolFixture.problems("# nothing here\n")
        #expect(problems.first?.message.contains("empty") == true)
    }

    @Test func wrongTypesAreReportedTogether() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([3: "revision: \"abc\"", 12: "duration_days: [1]"]))
        let revision = problems.errors(at: "revision")
        #expect(revision.count == 1)
        #expect(revision.first?.line == 3)
        #expect(revision.first?.message.contains("expected a whole number, found 'abc'") == true)
        let duration = problems.errors(at: "duration_days")
        #expect(duration.count == 1)
        #expect(duration.first?.line == 12)
        #expect(duration.first?.message.contains("found a list") == true)
        #expect(problems.filter { $0.severity == .error }.count == 2)
    }

    @Test func outOfRangeNumbersNameTheRange() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([25: "      threshold: 1.5", 28: "    max_days: -1"]))
        let threshold = problems.errors(at: "compliance.rules[0].threshold")
        #expect(threshold.first?.line == 25)
        #expect(threshold.first?.message.contains("between 0.0 and 1.0") == true)
        let maxDays = problems.errors(at: "deidentification.date_shift.max_days")
        #expect(maxDays.first?.line == 28)
    }

    @Test func badDateIsNamed() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([11: "  expires: 2027-02-30"]))
        let expires = problems.errors(at: "irb.expires")
        #expect(expires.first?.line == 11)
        #expect(expires.first?.message.contains("YYYY-MM-DD") == true)
    }

    // MARK: Keys

    @Test func unknownTopLevelKeySuggestsTheRightOne() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([4: "titel: \"Minimal daily pain diary\""]))
        let unknown = problems.errors(at: "titel")
        #expect(unknown.count == 1)
        #expect(unknown.first?.line == 4)
        #expect(unknown.first?.message == "unknown key")
        #expect(unknown.first?.hint?.contains("'title'") == true)
        // The real key is then missing, in the same error.
        #expect(problems.errors(at: "title").first?.message.contains("missing required key") == true)
    }

    @Test func unknownFieldInPolicySuggestsTheRightField() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([31: "    participant.brith_date: year"]))
        let unknown = problems.errors(at: "deidentification.fields.participant.brith_date")
        #expect(unknown.count == 1)
        #expect(unknown.first?.line == 31)
        #expect(unknown.first?.message.contains("unknown field 'brith_date'") == true)
        #expect(unknown.first?.hint?.contains("birth_date") == true)
    }

    @Test func unknownTableInPolicySuggestsTheRightTable() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([34: "    record.kind: keep"]))
        let unknown = problems.errors(at: "deidentification.fields.record.kind")
        #expect(unknown.first?.line == 34)
        #expect(unknown.first?.message.contains("unknown table 'record'") == true)
        #expect(unknown.first?.hint?.contains("'records'") == true)
    }

    @Test func everyMissingRequiredKeyIsReportedInOneError() {
        let text = ProtocolFixture.text([4: "# no title", 9: "  # no board", 12: "# no duration", 24: "      # no min_per_day"])
        let problems = ProtocolFixture.problems(text)
        let errors = problems.filter { $0.severity == .error }
        #expect(errors.count == 4, "\(errors)")
        #expect(Set(errors.map(\.keyPath)) == ["title", "duration_days", "irb.board", "compliance.rules[0].min_per_day"])
        #expect(errors.allSatisfy { $0.message == "missing required key" })
        // A missing key is reported where its mapping begins.
        #expect(problems.errors(at: "title").first?.line == 1)
        #expect(problems.errors(at: "duration_days").first?.line == 1)
        #expect(problems.errors(at: "irb.board").first?.line == 10)
        #expect(problems.errors(at: "compliance.rules[0].min_per_day").first?.line == 22)
        #expect(problems.errors(at: "irb.board").first?.hint?.contains("'board:'") == true)
    }

    // MARK: Data types and compliance

    @Test func unknownRecordKindSuggestsAKind() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([19: "  symptom_log: [pain, fatige]"]))
        let kind = problems.errors(at: "data_types.symptom_log[1]")
        #expect(kind.count == 1)
        #expect(kind.first?.line == 19)
        #expect(kind.first?.message.contains("unknown record kind 'fatige'") == true)
        #expect(kind.first?.hint == "did you mean 'fatigue'?")
    }

    @Test func unknownDataTypeSuggestsAType() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([19: "  symptom_log: [pain]\n  biometrik: [steps]"]))
        let type = problems.errors(at: "data_types.biometrik")
        #expect(type.first?.line == 20)
        #expect(type.first?.hint?.contains("'biometric'") == true)
    }

    @Test func kindUnderTheWrongDataTypeIsAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([19: "  symptom_log: [pain, steps]"]))
        let kind = problems.errors(at: "data_types.symptom_log[1]")
        #expect(kind.count == 1)
        #expect(kind.first?.line == 19)
        #expect(kind.first?.message.contains("'steps' belongs to biometric, not symptom_log") == true)
    }

    @Test func complianceRuleOnAnUncollectedDataTypeIsAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([23: "      data_type: biometric"]))
        let rule = problems.errors(at: "compliance.rules[0].data_type")
        #expect(rule.count == 1)
        #expect(rule.first?.line == 23)
        #expect(rule.first?.message.contains("does not collect biometric") == true)
        #expect(rule.first?.hint?.contains("data_types") == true)
    }

    @Test func complianceRuleOnAnUncollectedKindIsAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([23: "      kinds: [pain, steps]"]))
        let rule = problems.errors(at: "compliance.rules[0].kinds")
        #expect(rule.count == 1)
        #expect(rule.first?.line == 23)
        #expect(rule.first?.message.contains("does not collect steps") == true)
        #expect(rule.first?.hint?.contains("data_types.biometric") == true)
    }

    @Test func complianceRuleNeedsADataTypeOrKinds() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([23: "      description: counts nothing"]))
        let rule = problems.errors(at: "compliance.rules[0]")
        #expect(rule.first?.line == 22)
        #expect(rule.first?.message.contains("data_type or a list of kinds") == true)
    }

    // MARK: De-identification

    @Test func transformThatDoesNotApplyToTheFieldIsAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([31: "    participant.sex: zip3"]))
        let rule = problems.errors(at: "deidentification.fields.participant.sex")
        #expect(rule.count == 1)
        #expect(rule.first?.line == 31)
        #expect(rule.first?.message.contains("'zip3' does not apply to participant.sex") == true)
        #expect(rule.first?.hint == "allowed: drop, keep")
    }

    @Test func unknownTransformSuggestsOne() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([30: "    participant.id: pseudonymise"]))
        let rule = problems.errors(at: "deidentification.fields.participant.id")
        #expect(rule.first?.line == 30)
        #expect(rule.first?.hint == "did you mean 'pseudonymize'?")
    }

    @Test(arguments: ["    participant.age: age_band", "    participant.age: { transform: age_band }"])
    func ageBandWithoutBinsIsAnError(line: String) {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([31: line]))
        let rule = problems.errors(at: "deidentification.fields.participant.age")
        #expect(rule.count == 1)
        #expect(rule.first?.line == 31)
        #expect(rule.first?.message.contains("age_band needs bins") == true)
    }

    @Test func ageBandWithBinsLoads() throws {
        let text = ProtocolFixture.text([31: "    participant.sex: keep\n    participant.age: { transform: age_band, bins: [18, 40, 65, 90] }"])
        let loaded = try ProtocolLoader.parse(text, file: "test.yaml", templateRoot: nil)
        #expect(loaded.studyProtocol.deidentification.fields["participant.age"] == FieldRule(.ageBand, bins: [18, 40, 65, 90]))
    }

    @Test func decreasingBinsAreAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([31: "    participant.age: { transform: age_band, bins: [40, 18] }"]))
        let bins = problems.errors(at: "deidentification.fields.participant.age.bins")
        #expect(bins.first?.line == 31)
        #expect(bins.first?.message.contains("must increase") == true)
    }

    @Test func collectedFieldWithoutARuleIsAWarningNotAnError() throws {
        let loaded = try ProtocolLoader.parse(ProtocolFixture.text(), file: "test.yaml", templateRoot: nil)
        let note = loaded.warnings.filter { $0.message.contains("'symptom_log.note'") }
        #expect(note.count == 1)
        #expect(note.first?.severity == .warning)
        #expect(note.first?.keyPath == "deidentification.fields")
        #expect(note.first?.line != nil)
        #expect(note.first?.message.contains("dropped") == true)
        #expect(note.first?.hint?.contains("symptom_log.note: drop") == true)
        // Naming the field (on the shared `records` table) silences the warning.
        let ruled = try ProtocolLoader.parse(
            ProtocolFixture.text([37: "    records.unit: keep\n    records.note: drop"]), file: "test.yaml", templateRoot: nil)
        #expect(!ruled.warnings.contains { $0.message.contains("'symptom_log.note'") })
        #expect(ruled.warnings.count == loaded.warnings.count - 1)
    }

    // MARK: Consent and templates

    @Test func currentConsentVersionWithoutADocumentIsAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([14: "  current_version: \"2.0\""]))
        let consent = problems.errors(at: "consent.current_version")
        #expect(consent.count == 1)
        #expect(consent.first?.line == 14)
        #expect(consent.first?.message.contains("no document is listed for version 2.0") == true)
    }

    @Test func consentTemplateOutsideTemplatesIsAnError() {
        let problems = ProtocolFixture.problems(ProtocolFixture.text([17: "      template: ../secrets/consent.mustache"]))
        let template = problems.errors(at: "consent.documents[0].template")
        #expect(template.first?.line == 17)
    }

    @Test func missingTemplateIsAnErrorWhenTemplatesAreChecked() throws {
        try withTemporaryDirectory { root in
            let problems = ProtocolFixture.problems(ProtocolFixture.text(), templateRoot: root)
            let template = problems.errors(at: "consent.documents[0].template")
            #expect(template.count == 1)
            #expect(template.first?.line == 17)
            #expect(template.first?.message.contains("'templates/consent/minimal-1.0.mustache' does not exist") == true)
            // Without a template root nothing is checked; with the project root the template exists.
            #expect(throws: Never.self) { try ProtocolLoader.parse(ProtocolFixture.text(), file: "test.yaml", templateRoot: nil) }
            #expect(throws: Never.self) { try ProtocolLoader.parse(ProtocolFixture.text(), file: "test.yaml", templateRoot: repositoryRoot) }
        }
    }

    @Test func loadChecksTemplatesNextToTheProtocolsFolderByDefault() throws {
        try withTemporaryDirectory { root in
            let folder = root.appendingPathComponent("protocols")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let url = folder.appendingPathComponent("study.yaml")
            try Data(ProtocolFixture.text().utf8).write(to: url)
            #expect(throws: ProtocolValidationError.self) { try ProtocolLoader.load(contentsOf: url) }
            let template = root.appendingPathComponent("templates/consent/minimal-1.0.mustache")
            try FileManager.default.createDirectory(at: template.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data("Consent {{version}}".utf8).write(to: template)
            let loaded = try ProtocolLoader.load(contentsOf: url)
            #expect(loaded.source == url)
        }
    }

    @Test func missingFileIsNotFound() {
        let error = #expect(throws: CohortError.self) {
            try ProtocolLoader.load(contentsOf: URL(fileURLWithPath: "/nonexistent/cohort/protocol.yaml"))
        }
        #expect(error?.code == .notFound)
    }

    // MARK: JSON

    static let jsonLines = [
        "{",  // 1
        "  \"schema\": \"cohort/protocol@1\",",  // 2
        "  \"id\": \"minimal-pain\",",  // 3
        "  \"revision\": 1,",  // 4
        "  \"title\": \"Minimal daily pain diary\",",  // 5
        "  \"institution\": \"Example Clinic\",",  // 6
        "  \"principal_investigator\": { \"name\": \"Dr. Jo Example\" },",  // 7
        "  \"irb\": { \"board\": \"Example IRB\", \"approval_number\": \"IRB-0001\", \"expires\": \"2027-01-31\" },",  // 8
        "  \"duration_days\": 30,",  // 9
        "  \"consent\": {",  // 10
        "    \"current_version\": \"1.0\",",  // 11
        "    \"documents\": [{ \"version\": \"1.0\", \"template\": \"templates/consent/minimal-1.0.mustache\" }]",  // 12
        "  },",  // 13
        "  \"data_types\": { \"symptom_log\": [\"pain\"] },",  // 14
        "  \"compliance\": {",  // 15
        "    \"rules\": [{ \"id\": \"daily-pain\", \"data_type\": \"symptom_log\", \"min_per_day\": 1, \"threshold\": 0.8 }]",  // 16
        "  },",  // 17
        "  \"deidentification\": {",  // 18
        "    \"date_shift\": { \"max_days\": 30 },",  // 19
        "    \"fields\": {",  // 20
        "      \"participant.id\": \"pseudonymize\",",  // 21
        "      \"participant.sex\": \"keep\",",  // 22
        "      \"participant.enrolled_on\": \"shift\",",  // 23
        "      \"records.participant\": \"pseudonymize\",",  // 24
        "      \"records.kind\": \"keep\",",  // 25
        "      \"records.start\": \"shift\",",  // 26
        "      \"records.value\": \"keep\",",  // 27
        "      \"records.unit\": \"keep\"",  // 28
        "    }",  // 29
        "  },",  // 30
        "  \"export\": { \"formats\": [\"csv\", \"json\", \"fhir\"] }",  // 31
        "}",  // 32
    ]

    static func json(_ edits: [Int: String] = [:]) -> String {
        jsonLines.enumerated().map { index, line in edits[index + 1] ?? line }.joined(separator: "\n") + "\n"
    }

    @Test func jsonProtocolParsesLikeTheYAML() throws {
        let fromJSON = try ProtocolLoader.parse(Self.json(), file: "test.json", templateRoot: repositoryRoot)
        let fromYAML = try ProtocolLoader.parse(ProtocolFixture.text(), file: "test.yaml", templateRoot: repositoryRoot)
        #expect(fromJSON.studyProtocol == fromYAML.studyProtocol)
        #expect(try fromJSON.canonicalJSON() == fromYAML.canonicalJSON())
        #expect(fromJSON.warnings.map(\.message) == fromYAML.warnings.map(\.message))
    }

    @Test func jsonErrorsCarryLines() {
        let problems = ProtocolFixture.problems(
            Self.json([4: "  \"revision\": \"abc\",", 22: "      \"participant.sex\": \"zip3\","]), file: "test.json")
        #expect(problems.errors(at: "revision").first?.line == 4)
        #expect(problems.errors(at: "revision").first?.file == "test.json")
        #expect(problems.errors(at: "deidentification.fields.participant.sex").first?.line == 22)
    }

    @Test func malformedJSONNamesTheLine() {
        let problems = ProtocolFixture.problems(Self.json([9: "  \"duration_days\": 30"]), file: "test.json")
        #expect(problems.count == 1)
        #expect(problems.first?.message.contains("malformed YAML") == true)
        #expect(problems.first?.line == 10)
    }

    // MARK: Reporting

    @Test func problemDescriptionNamesFileLineAndKey() {
        let problem = ProtocolProblem(.error, file: "p.yaml", line: 3, keyPath: "revision", message: "expected a whole number", hint: "e.g. 2")
        #expect(problem.description == "p.yaml:3: error: revision: expected a whole number (e.g. 2)")
        let error = ProtocolValidationError(problems: [problem, problem])
        #expect(error.description.split(separator: "\n").count == 2)
    }

    @Test(arguments: [("titel", "title"), ("duration_day", "duration_days"), ("heart_rat", "heart_rate"), ("zzzzzzzz", nil)] as [(String, String?)])
    func suggestion(word: String, expected: String?) {
        let candidates = NodeReader.topKeys + RecordKind.allCases.map(\.rawValue)
        #expect(Suggest.closest(to: word, in: candidates) == expected)
    }

    /// `k_anonymity.sensitive` names fields published outside participants.csv; the old
    /// `quasi_identifiers` list is optional and still accepted.
    @Test func kAnonymityTakesSensitiveFieldsAndOptionalExtraQuasiIdentifiers() throws {
        let text = ProtocolFixture.text([28: "    max_days: 30\n  k_anonymity:\n    k: 4\n    sensitive: [medication_log.text, consent.sharing]"])
        let loaded = try ProtocolLoader.parse(text, file: "test.yaml", templateRoot: nil)
        #expect(loaded.studyProtocol.deidentification.kAnonymity == .init(k: 4, quasiIdentifiers: [], sensitive: ["medication_log.text", "consent.sharing"]))
        let bad = ProtocolFixture.problems(ProtocolFixture.text([28: "    max_days: 30\n  k_anonymity:\n    k: 4\n    sensitive: [participant.sex]"]))
        #expect(bad.first?.keyPath == "deidentification.k_anonymity.sensitive[0]" && bad.first?.line == 31)
        let old = try ProtocolLoader.load(contentsOf: repositoryRoot.appendingPathComponent("protocols/migraine-risk.yaml"))
        #expect(old.studyProtocol.deidentification.kAnonymity?.sensitive == nil)
    }

    /// Issue 27: `embargo_days`, `exogenous` and `exogenous_kinds` load; older protocols keep
    /// their canonical JSON (no new keys encoded at their defaults); an embargo above the range
    /// and unknown values are refused with their key path.
    @Test func dateShiftTimeSettingsLoad() throws {
        let text = ProtocolFixture.text([28: "    max_days: 60\n    embargo_days: 30\n    exogenous: dated\n    exogenous_kinds: [heart_rate]\n    holidays: mask"])
        let loaded = try ProtocolLoader.parse(text, file: "test.yaml", templateRoot: nil)
        #expect(loaded.studyProtocol.deidentification.dateShift == .init(maxDays: 60, wholeWeeks: false, embargoDays: 30, exogenous: .dated, exogenousKinds: [.heartRate], maskHolidays: true))
        let plain = try ProtocolLoader.parse(ProtocolFixture.text([28: "    max_days: 30"]), file: "test.yaml", templateRoot: nil)
        let json = String(decoding: try plain.canonicalJSON(), as: UTF8.self)
        #expect(!json.contains("embargo") && !json.contains("exogenous") && !json.contains("holidays"))
        let bad = ProtocolFixture.problems(ProtocolFixture.text([28: "    max_days: 30\n    embargo_days: 31\n    exogenous: archive\n    exogenous_kinds: [rain]"]))
        #expect(bad.contains { $0.keyPath == "deidentification.date_shift.embargo_days" })
        #expect(bad.contains { $0.keyPath == "deidentification.date_shift.exogenous" })
        #expect(bad.contains { $0.keyPath == "deidentification.date_shift.exogenous_kinds[0]" })
    }

    /// Issue 27: `k_anonymity.record_attributes` loads; `enforce` is the default and is encoded
    /// only when given (older protocols keep their canonical JSON); anything else is refused.
    @Test func recordAttributesLoad() throws {
        let text = ProtocolFixture.text([28: "    max_days: 30\n  k_anonymity:\n    k: 4\n    record_attributes: enforce"])
        let loaded = try ProtocolLoader.parse(text, file: "test.yaml", templateRoot: nil)
        #expect(loaded.studyProtocol.deidentification.kAnonymity?.enforceRecordAttributes == true)
        #expect(String(decoding: try loaded.canonicalJSON(), as: UTF8.self).contains("record_attributes"))
        let absent = try ProtocolLoader.parse(ProtocolFixture.text([28: "    max_days: 30\n  k_anonymity:\n    k: 4"]), file: "test.yaml", templateRoot: nil)
        #expect(absent.studyProtocol.deidentification.kAnonymity?.enforceRecordAttributes == true)
        #expect(!String(decoding: try absent.canonicalJSON(), as: UTF8.self).contains("record_attributes"))
        let stated = try ProtocolLoader.parse(
            ProtocolFixture.text([28: "    max_days: 30\n  k_anonymity:\n    k: 4\n    record_attributes: state"]), file: "test.yaml", templateRoot: nil)
        #expect(stated.studyProtocol.deidentification.kAnonymity?.enforceRecordAttributes == false)
        let bad = ProtocolFixture.problems(ProtocolFixture.text([28: "    max_days: 30\n  k_anonymity:\n    k: 4\n    record_attributes: always"]))
        #expect(bad.contains { $0.keyPath == "deidentification.k_anonymity.record_attributes" })
    }
}
