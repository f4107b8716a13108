import CohortCore
import Foundation

/// Builds FHIR R4 resources from de-identified rows.
///
/// References are written in one of two styles: `urn:uuid:<id>` inside a participant's
/// collection Bundle (where every target is an entry with that `fullUrl`), and `Type/<id>` in the
/// Bulk Data NDJSON files.
struct FHIRMapper: Sendable {
    enum Style: Sendable {
        case bundle
        case bulk
    }

    let context: ExportContext
    let studyResourceID: String
    /// Whether the policy removed any participant field (Patient gets the REDACTED label).
    let participantRedacted: Bool

    init(context: ExportContext) {
        self.context = context
        studyResourceID = ResourceID.make(["ResearchStudy", context.studyProtocol.id])
        let policy = context.studyProtocol.deidentification
        participantRedacted = ParticipantField.allCases.contains { field in
            field != .id && (policy.rule(table: "participant", field: field.rawValue).map { $0.transform == .drop } ?? true)
        }
    }

    var studyID: String { context.studyProtocol.id }

    func reference(_ type: String, _ id: String, _ style: Style, display: String? = nil) -> FHIR.Reference {
        switch style {
        case .bundle: FHIR.Reference(reference: "urn:uuid:\(id)", display: display)
        case .bulk: FHIR.Reference(reference: "\(type)/\(id)", display: display)
        }
    }

    // MARK: - Ids

    func patientID(_ pseudonym: String) -> String { ResourceID.make(["Patient", studyID, pseudonym]) }
    func subjectID(_ pseudonym: String) -> String { ResourceID.make(["ResearchSubject", studyID, pseudonym]) }
    func provenanceID(_ pseudonym: String) -> String { ResourceID.make(["Provenance", studyID, pseudonym]) }
    func bundleID(_ pseudonym: String) -> String { ResourceID.make(["Bundle", studyID, pseudonym]) }
    func transactionBundleID(_ pseudonym: String) -> String { ResourceID.make(["TransactionBundle", studyID, pseudonym]) }

    func consentID(_ c: DeidentifiedConsent, ordinal: Int) -> String {
        ResourceID.make(["Consent", studyID, c.pseudonym, String(ordinal), c.version ?? "", c.signedAt?.iso8601 ?? ""])
    }

    /// The record's id: its identifying content plus its position among the participant's
    /// records, so two identical records still get distinct ids.
    func recordID(_ r: DeidentifiedRecord, ordinal: Int, ids: ResourceID.Builder) -> String {
        ids.append(r.kind == .medicationDose ? "MedicationStatement" : "Observation")
        ids.append(studyID)
        ids.append(r.pseudonym)
        ids.append(r.kind.rawValue)
        ids.append(r.start)
        ids.append(r.end)
        ids.append(ordinal)
        return ids.make()
    }

    // MARK: - Study and participant

    func researchStudy() -> FHIR.ResearchStudy {
        FHIR.ResearchStudy(
            id: studyResourceID, text: FHIR.Narrative("Research study \(context.studyProtocol.title)"),
            identifier: [FHIR.Identifier(system: "\(FHIR.base)/sid/study", value: studyID)], title: context.studyProtocol.title)
    }

    func patient(_ p: DeidentifiedParticipant) -> FHIR.Patient {
        var security = [FHIR.Coding(system: FHIR.observationValue, code: "PSEUDED", display: "pseudonymized")]
        // A birth year generalized to a range cannot go into birthDate (a FHIR date): it is
        // omitted, and the resource labelled REDACTED.
        if participantRedacted || p.birthYearRange != nil { security.append(FHIR.Coding(system: FHIR.observationValue, code: "REDACTED", display: "redacted")) }
        return FHIR.Patient(
            id: patientID(p.pseudonym), meta: FHIR.Meta(security: security),
            text: FHIR.Narrative("Pseudonymized study participant"),
            identifier: [FHIR.Identifier(system: "\(FHIR.base)/sid/\(studyID)/pseudonym", value: p.pseudonym)],
            gender: p.sex?.rawValue, birthDate: p.birthYear.map { Self.yearText($0) })
    }

    /// Consents ordered by signing time; a superseded consent ends when the next one was signed.
    func consents(_ consents: [DeidentifiedConsent], of p: DeidentifiedParticipant, style: Style) -> [FHIR.Consent] {
        let participantWithdrawn = p.status?.isWithdrawn ?? false
        let patient = reference("Patient", patientID(p.pseudonym), style)
        return consents.enumerated().map { ordinal, c in
            let next = consents.dropFirst(ordinal + 1).first?.signedAt
            let inactive = c.status == "superseded" || c.status == "withdrawn" || participantWithdrawn
            var end: Timestamp?
            if c.status == "superseded" { end = next }
            if c.status == "withdrawn" || participantWithdrawn { end = p.withdrawnAt ?? end }
            if let start = c.signedAt, let e = end, e < start { end = nil }
            return FHIR.Consent(
                id: consentID(c, ordinal: ordinal), text: FHIR.Narrative("Research consent, version \(c.version ?? "not exported")"),
                status: inactive ? "inactive" : "active",
                scope: FHIR.CodeableConcept(coding: [FHIR.Coding(system: FHIR.consentScope, code: "research", display: "Research")]),
                category: [
                    FHIR.CodeableConcept(coding: [FHIR.Coding(system: Coding.loincSystem, code: "59284-0", display: "Consent Document")])
                ],
                patient: patient, dateTime: c.signedAt?.iso8601,
                policy: [FHIR.Consent.Policy(uri: "\(FHIR.base)/\(studyID)/consent/\(c.version ?? "unknown")")],
                provision: FHIR.Consent.Provision(
                    type: FHIR.consentActionPermit,
                    period: c.signedAt.map { FHIR.Period(start: $0.iso8601, end: end?.iso8601) },
                    purpose: [FHIR.Coding(system: FHIR.actReason, code: "HRESCH", display: "healthcare research")]))
        }
    }

    func researchSubject(_ p: DeidentifiedParticipant, consentIDs: [String], consents: [DeidentifiedConsent], style: Style)
        -> FHIR.ResearchSubject
    {
        let withdrawn = p.status?.isWithdrawn ?? false
        let current = consents.lastIndex { $0.status == "active" } ?? (consentIDs.isEmpty ? nil : consentIDs.count - 1)
        let period: FHIR.Period? =
            p.enrolledOn == nil && p.withdrawnAt == nil && p.enrollmentPeriod == nil && p.withdrawalPeriod == nil
            ? nil
            : FHIR.Period(
                start: p.enrolledOn?.description ?? Self.partialDate(p.enrollmentPeriod),
                end: withdrawn ? p.withdrawnAt?.iso8601 ?? Self.partialDate(p.withdrawalPeriod) : nil)
        return FHIR.ResearchSubject(
            id: subjectID(p.pseudonym), text: FHIR.Narrative("Study participation"), status: withdrawn ? "withdrawn" : "on-study",
            period: period, study: reference("ResearchStudy", studyResourceID, style),
            individual: reference("Patient", patientID(p.pseudonym), style),
            consent: current.map { reference("Consent", consentIDs[$0], style) })
    }

    /// A period generalized for k-anonymity as a FHIR partial date (`2025`, `2025-03`); nil for a
    /// quarter, which FHIR cannot express (the element is then omitted).
    static func partialDate(_ period: String?) -> String? {
        guard let period, period.range(of: #"^[0-9]{4}(-[0-9]{2})?$"#, options: .regularExpression) != nil else { return nil }
        return period
    }

    func provenance(_ p: DeidentifiedParticipant, style: Style) -> FHIR.Provenance {
        FHIR.Provenance(
            id: provenanceID(p.pseudonym), text: FHIR.Narrative("De-identification of the participant's data for export"),
            target: [reference("Patient", patientID(p.pseudonym), style)], recorded: context.createdAt.iso8601,
            policy: ["urn:cohort:deidentification-policy:sha256:\(context.policySHA256)"],
            reason: [FHIR.CodeableConcept(coding: [FHIR.Coding(system: FHIR.actReason, code: "HRESCH", display: "healthcare research")])],
            activity: FHIR.CodeableConcept(
                coding: [FHIR.Coding(system: FHIR.observationValue, code: "PSEUDED", display: "pseudonymized")],
                text: "de-identification"),
            agent: [
                FHIR.Provenance.Agent(
                    type: FHIR.CodeableConcept(
                        coding: [FHIR.Coding(system: FHIR.provenanceParticipantType, code: "assembler", display: "Assembler")]),
                    who: FHIR.Reference(reference: nil, display: "cohort \(context.toolVersion)"))
            ])
    }

    // MARK: - Records

    /// A record's resource, typed so the writer can write it without a dynamic cast.
    enum RecordResource {
        case observation(FHIR.Observation)
        case medicationStatement(FHIR.MedicationStatement)

        var resource: any FHIRResource {
            switch self {
            case .observation(let o): o
            case .medicationStatement(let m): m
            }
        }

        var id: String {
            switch self {
            case .observation(let o): o.id
            case .medicationStatement(let m): m.id
            }
        }

        func write(to json: inout FHIRJSON) {
            switch self {
            case .observation(let o): o.write(to: &json)
            case .medicationStatement(let m): m.write(to: &json)
            }
        }
    }

    /// The resource for a record: MedicationStatement for medication doses, Observation otherwise.
    /// `subject`: the reference to the record's Patient, in the wanted style (the same for all of
    /// a participant's records); `ids` builds the record's id.
    func resource(_ r: DeidentifiedRecord, ordinal: Int, subject: FHIR.Reference, ids: ResourceID.Builder) -> RecordResource {
        let id = recordID(r, ordinal: ordinal, ids: ids)
        let parts = Self.kindParts[r.kind] ?? KindParts(r.kind)
        // FHIR strings must not be empty: an empty note, name or label is the same as none.
        let note = Self.nonEmpty(r.note), text = Self.nonEmpty(r.text), label = Self.nonEmpty(r.valueLabel)
        let notes = note.map { [FHIR.Annotation(text: $0)] }
        let (dateTime, period) = effective(r)
        let quantity = r.value.flatMap { value in
            FHIR.numberText(value).map {
                FHIR.Quantity(numberText: $0, unit: parts.unitDisplay, system: FHIR.ucum, code: parts.unit)
            }
        }
        if r.kind == .medicationDose {
            let medication = text.map { name in
                // The protocol's RxNorm code for this name (case-insensitive), if it names one.
                let key = name.trimmingCharacters(in: .whitespaces).lowercased()
                let code = context.studyProtocol.medicationCodes[key]
                return FHIR.CodeableConcept(coding: code.map { [FHIR.Coding(system: FHIR.rxNorm, code: $0, display: key)] }, text: name)
            } ?? Self.masked
            return .medicationStatement(
                FHIR.MedicationStatement(
                    id: id, text: parts.narrative, medicationCodeableConcept: medication, subject: subject,
                    effectiveDateTime: dateTime, effectivePeriod: period, note: notes,
                    dosage: quantity.map { [FHIR.MedicationStatement.Dosage(doseAndRate: [.init(doseQuantity: $0)])] }))
        }
        var observation = FHIR.Observation(
            id: id, text: parts.narrative, category: parts.category, code: parts.code,
            subject: subject, effectiveDateTime: dateTime, effectivePeriod: period, note: notes,
            device: Self.nonEmpty(r.source).map { FHIR.Reference(reference: nil, display: $0) })
        if let quantity {
            observation.valueQuantity = quantity
        } else if let label {
            observation.valueString = label
        } else if r.kind.requiresValue {
            // The value was withheld by the de-identification policy.
            observation.dataAbsentReason = Self.masked
        }
        if r.kind == .workout, let text {
            observation.component = [FHIR.Observation.Component(code: Self.workoutActivity, valueString: text)]
        }
        if r.kind == .migraineAttack, let text {
            let triggers = Self.migraineTriggers(text)
            if !triggers.isEmpty {
                observation.component = triggers.map { FHIR.Observation.Component(code: Self.migraineTrigger, valueString: $0) }
            }
        }
        return .observation(observation)
    }

    /// The Observation of a participant's overlap-free daily total (``DailyTotals``) of a
    /// cumulative kind: `effectivePeriod` the local day (`r.start` midnight to `r.end` the next),
    /// `valueQuantity` the total, coded `daily_total_<kind>` in cohort's local code system — not
    /// the kind's own code, so a reader (cohort's FHIR import among them) never takes it for one
    /// more sample.
    func dailyTotal(_ r: DeidentifiedRecord, ordinal: Int, subject: FHIR.Reference, ids: ResourceID.Builder) -> RecordResource {
        let id = recordID(r, ordinal: ordinal, ids: ids)
        let parts = Self.kindParts[r.kind] ?? KindParts(r.kind)
        let code = Self.dailyTotalCode(r.kind)
        let (dateTime, period) = effective(r)
        var observation = FHIR.Observation(
            id: id, text: parts.narrative, category: parts.category, code: code, subject: subject, effectiveDateTime: dateTime,
            effectivePeriod: period, note: nil, device: nil)
        observation.valueQuantity = r.value.flatMap { value in
            FHIR.numberText(value).map { FHIR.Quantity(numberText: $0, unit: parts.unitDisplay, system: FHIR.ucum, code: parts.unit) }
        }
        return .observation(observation)
    }

    /// A migraine attack's triggers: its text's `;`-separated items, trimmed, empty ones left out.
    static func migraineTriggers(_ text: String) -> [String] {
        text.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// The `code` of a daily total of `kind`.
    static func dailyTotalCode(_ kind: RecordKind) -> FHIR.CodeableConcept {
        FHIR.CodeableConcept(
            coding: [FHIR.Coding(system: Coding.localSystem, code: DailyTotals.fhirCodePrefix + kind.rawValue, display: "Daily total (each minute once): \(kind.rawValue)")])
    }

    private func effective(_ r: DeidentifiedRecord) -> (String?, FHIR.Period?) {
        if let end = r.end { return (nil, FHIR.Period(start: r.start.map(ByteText.timestamp), end: ByteText.timestamp(end))) }
        return (r.start.map(ByteText.timestamp), nil)
    }

    /// What a record's resource takes from its kind alone; built once per kind, not per record.
    struct KindParts: Sendable {
        let narrative: FHIR.Narrative
        let category: [FHIR.CodeableConcept]?
        let code: FHIR.CodeableConcept
        /// The UCUM code and its display (`Quantity.code`, `Quantity.unit`).
        let unit: String
        let unitDisplay: String
        /// The kind's place in `RecordKind.allCases` (``FHIRJSON/memoSlot``); nil when built
        /// outside ``kindParts``.
        let slot: Int?

        init(_ kind: RecordKind, slot: Int? = nil) {
            self.slot = slot
            let coding = kind.coding
            narrative = kind == .medicationDose ? FHIR.Narrative("Medication dose taken") : FHIR.Narrative(coding.display)
            category = FHIRMapper.category(kind).map { [FHIR.CodeableConcept(coding: $0)] }
            code = FHIR.CodeableConcept(coding: [FHIR.Coding(system: coding.system, code: coding.code, display: coding.display)])
            unit = kind.canonicalUnit
            unitDisplay = FHIRMapper.unitDisplay(kind.canonicalUnit)
        }
    }

    static let kindParts: [RecordKind: KindParts] = Dictionary(
        uniqueKeysWithValues: RecordKind.allCases.enumerated().map { ($0.element, KindParts($0.element, slot: $0.offset)) })

    /// The value withheld (or the medication name) by the de-identification policy.
    static let masked = FHIR.CodeableConcept(coding: [FHIR.Coding(system: FHIR.dataAbsentReason, code: "masked", display: "Masked")])

    /// The component carrying a workout's activity type (``WorkoutActivity``, e.g. `running`).
    static let workoutActivity = FHIR.CodeableConcept(
        coding: [FHIR.Coding(system: Coding.localSystem, code: "workout_activity", display: "Workout activity type")])

    static let migraineTrigger = FHIR.CodeableConcept(
        coding: [FHIR.Coding(system: Coding.localSystem, code: "migraine_trigger", display: "Migraine trigger")])

    /// The observation category: vital signs, activity, participant-reported (survey), or the
    /// environment. The standard observation-category system has no environment code; weather
    /// readings are environmental exposure, which its `social-history` code covers ("occupational,
    /// personal, social, familial and environmental history"), so they carry that coding plus
    /// cohort's own `environment` code to tell them apart from lifestyle answers. Medication doses
    /// are MedicationStatements and have no Observation category (nil). What a participant drinks
    /// (water, caffeine in mg) is lifestyle, which `social-history` also covers ("personal (e.g.
    /// lifestyle)"), with cohort's own `intake` code beside it.
    static func category(_ kind: RecordKind) -> [FHIR.Coding]? {
        switch kind {
        case .heartRate, .restingHeartRate, .hrvSDNN, .spo2, .respiratoryRate, .bodyMass, .bodyFatPercentage, .bmi:
            [FHIR.Coding(system: FHIR.observationCategory, code: "vital-signs", display: "Vital Signs")]
        case .steps, .sleepDuration, .distanceWalkingRunning, .flightsClimbed, .activeEnergy, .basalEnergy, .exerciseTime, .workout, .mindfulSession:
            [FHIR.Coding(system: FHIR.observationCategory, code: "activity", display: "Activity")]
        case .waterIntake, .caffeineIntake:
            [
                FHIR.Coding(system: FHIR.observationCategory, code: "social-history", display: "Social History"),
                FHIR.Coding(system: FHIR.localObservationCategory, code: "intake", display: "Intake"),
            ]
        case .pain, .morningStiffness, .fatigue, .basdai, .stress, .hydration, .caffeine, .migraineAttack, .menstrualCycleDay, .flare:
            [FHIR.Coding(system: FHIR.observationCategory, code: "survey", display: "Survey")]
        case .barometricPressure, .ambientTemperature, .relativeHumidity:
            [
                FHIR.Coding(system: FHIR.observationCategory, code: "social-history", display: "Social History"),
                FHIR.Coding(system: FHIR.localObservationCategory, code: "environment", display: "Environment"),
            ]
        case .medicationDose:
            nil
        }
    }

    /// A human unit for `Quantity.unit` (the UCUM code stays in `Quantity.code`).
    static func unitDisplay(_ ucum: String) -> String {
        switch ucum {
        case "{score}": "score"
        case "{steps}": "steps"
        case "{cup}": "cups"
        case "{flights}": "flights"
        case "/min": "/min"
        case "Cel": "°C"
        case "d": "day"
        case "h": "h"
        default: ucum
        }
    }

    static func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    /// Year text for a year-only FHIR date (`YYYY`).
    static func yearText(_ year: Int) -> String {
        let text = String(year)
        return text.count >= 4 ? text : String(repeating: "0", count: 4 - text.count) + text
    }
}
