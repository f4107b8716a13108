package import CohortCore
package import CohortIO
import Foundation

/// Turns participants, consents and records into their de-identified rows under the protocol's
/// allow-list policy, for one recipient: pseudonyms are the recipient's, date shifts the same for
/// every recipient.
///
/// Every field consults ``DeidentificationPolicy/rule(table:field:)``: no rule, or `drop`, leaves
/// the field nil, and an unruled value is counted in ``stats`` (and the report) as dropped. A
/// transform that does not apply to a field also drops it. Direct identifiers (study code, name,
/// email, phone, address, MRN, consent signature) have no column in the de-identified rows and
/// are always removed, whatever the policy says.
///
/// Field by field:
/// - `participant.id` → pseudonym (the policy must say `pseudonymize`, checked at init);
/// - `participant.birth_date` (`year`, `keep`, `shift`) → birth year; nil when the participant
///   is 90 or older on the enrollment date or on `referenceDate`, and the age band is then `90+`;
/// - `participant.age` (`age_band`, `generalize` with `bins`; `keep` → the number) → the age at
///   enrollment, banded; `90+` for 90 and over (at enrollment or on `referenceDate`);
/// - `participant.zip` (`zip3`, `keep`) → ZIP3, `000` for restricted prefixes; `generalize`
///   maps the ZIP3 through `map`;
/// - `participant.enrolled_on` (`shift`, `year` → 1 January, `keep`); the withdrawal instant
///   follows the same rule;
/// - `participant.utc_offset` (no rule of its own): the one offset the participant's instants are
///   written at, filled whenever the policy publishes an instant (``publishesInstants(_:)``);
/// - `participant.sex`, `participant.status` (`keep`, `generalize`);
/// - `participant.time_zone`, `participant.devices` (`generalize` via `map`/`other`, `scrub`;
///   device names under `keep` are scrubbed: they are identifiers);
/// - `consent.version`, `document_sha256`, `sharing`, `status` (`keep`, `generalize`);
///   `consent.signed_at` like dates;
/// - records (table = the kind's data type, falling back to `records.*`): `start`/`end` (`shift`,
///   `year` → 1 January 00:00, `keep`), `value` (`keep`, `generalize` with
///   `bins` → label `5–<10`), `unit` (`keep`), `text`/`source`/`note` (`keep`, `scrub`,
///   `generalize`).
///
/// Instants (`shift`, `keep`, `year`) are written at the participant's one published offset and
/// shifted on their wall clock (``ParticipantShift``). Nothing dated after ``horizon`` (the
/// creation minus the policy's `embargo_days`) is published: such a record is left out
/// (``record(_:of:)`` returns nil), such a date or instant is left empty, and both are counted in
/// ``DeidentificationStats/leftOutAfterCreation``. Records of exogenous kinds (the weather) are
/// left out unless the policy says `exogenous: dated`, counted in
/// ``DeidentificationStats/leftOutExogenous``.
///
/// A value type; the row methods are `mutating` because they add to ``stats``.
package struct Deidentifier: Sendable {
    /// Fields that are removed whatever the policy says: the de-identified rows have no place
    /// for them.
    package static let directIdentifiers = [
        "participant.code", "participant.name", "participant.email", "participant.phone", "participant.address",
        "participant.mrn", "consent.signature",
    ]

    public let studyProtocol: StudyProtocol
    public let recipient: String
    /// The day ages are also checked on (the export date): nobody 90 or older then gets a birth
    /// year or an age below `90+`.
    package let referenceDate: CivilDate
    /// The export's creation instant: no published date or instant is after it, and each
    /// participant's published offset is their zone's standard offset at this instant.
    public let createdAt: Timestamp
    /// The last instant anything published may be dated at: ``createdAt`` minus the policy's
    /// `embargo_days`, so a participant's last published record does not bound their shift.
    package let horizon: Timestamp
    /// What this de-identifier has done so far.
    package var stats: DeidentificationStats {
        var result = counted
        for (typeIndex, plan) in recordPlans.enumerated() {
            for (fieldIndex, field) in plan.fields.enumerated() {
                let slot = (typeIndex * RecordPlan.fieldNames.count + fieldIndex) * Outcome.count
                if recordTallies[slot + Outcome.applied.rawValue] > 0, let ruleKey = field.ruleKey, let transform = field.transform {
                    result.applied[field.key, default: .init(rule: ruleKey, transform: transform, values: 0)].values +=
                        recordTallies[slot + Outcome.applied.rawValue]
                }
                if recordTallies[slot + Outcome.unruled.rawValue] > 0 {
                    result.droppedUnruled[field.key, default: 0] += recordTallies[slot + Outcome.unruled.rawValue]
                }
                if recordTallies[slot + Outcome.unsupported.rawValue] > 0 {
                    result.droppedUnsupported[field.key, default: 0] += recordTallies[slot + Outcome.unsupported.rawValue]
                }
            }
        }
        return result
    }

    /// A copy for another worker thread: the same policy, keys, shifts and scrubber, with nothing
    /// counted yet and no participant in progress. Each record's row depends only on the record
    /// and its participant, so workers that each de-identify other participants' records publish
    /// what one de-identifier would, and their ``stats`` added with
    /// ``DeidentificationStats/merge(_:)`` to this one's are what it would have counted.
    package func workerCopy() -> Deidentifier {
        var copy = self
        copy.counted = DeidentificationStats()
        copy.recordTallies = [Int](repeating: 0, count: recordTallies.count)
        copy.lastRecordParticipant = nil
        copy.holidayMask = nil
        return copy
    }

    /// Counts of participant and consent fields (kept as they happen), and everything but the
    /// per-field record counts, which are tallied in `recordTallies` (a record costs no string
    /// keys) and folded into ``stats`` when it is read.
    private var counted = DeidentificationStats()
    /// One plan per data type (`DataType.allCases` order): each record field's rule and keys.
    private let recordPlans: [RecordPlan]
    /// Every plan's fields in one array, at `dataType · fields + field` (a record's `base +
    /// field`), and what each is decided on: a record reads its type's entries by index, with no
    /// copy of the plan (whose field array a copy retains and releases) and no reference counted
    /// for a field it only decides on (issue 28, ninth round).
    private let recordFields: [RecordPlan.Field]
    private let recordDecisions: [FieldDecision]

    /// A record field's ``RecordPlan/Field/applies`` and ``RecordPlan/Field/transform``: plain
    /// values, read per record without retaining the field.
    private struct FieldDecision: Sendable {
        let applies: Transform?
        let transform: Transform?
    }
    /// `[(dataType · fields + field) · Outcome.count + outcome]`: record field outcomes.
    private var recordTallies: [Int]
    /// The last participant a record came from, with their pseudonym and date shift.
    private var lastRecordParticipant: RecordParticipant?
    /// A participant's pseudonym and date shift, kept from one of their records to the next.
    package struct RecordParticipant: Sendable {
        let id: UUID
        let pseudonym: String
        var shift: ParticipantShift
        /// The last source generalized for the participant (``publishedSource(_:_:_:state:)``).
        var lastSource: SourceMemo?
        /// Texts scrubbed for the participant (``scrubbedText(_:_:state:)``), at most
        /// ``ScrubMemo/limit``.
        var scrubbed: [ScrubMemo] = []
    }
    /// A text as read (`raw`) under `scrub`, what it was published as, and what the scrubber
    /// counted in it (the same in any field: the scrubber sees only the text and the shift).
    struct ScrubMemo: Sendable {
        /// A participant's texts and sources come from a few medications and devices.
        static let limit = 8
        let raw: String
        let published: String
        let counts: ScrubCounts
    }
    /// A record source as read (`raw`), the type it was published under (its plan's tally
    /// base) and what it was published as.
    struct SourceMemo: Sendable {
        let base: Int
        let raw: String
        let published: String?
    }
    /// Holiday masking: the participant it is about, their region, and per kind the last day
    /// total on each weekday (ISO), which a holiday's total is replaced by.
    private var holidayMask: (id: UUID, region: PublicHolidays.Region?, last: [RecordKind: [Int: Double]])?

    /// What happened to one record field.
    private enum Outcome: Int {
        case applied = 0, unruled, unsupported
        static let count = 3
    }

    /// The rules a data type's record fields resolve to, resolved once instead of per record.
    private struct RecordPlan: Sendable {
        static let fieldNames = ["start", "end", "value", "unit", "text", "source", "note"]
        /// A class, so a record's look at its field (seven per record) retains one reference
        /// instead of copying the keys and the rule's bins, map and text (issue 28: the copies
        /// were about 2.5 % of the CSV + JSON export's CPU).
        final class Field: Sendable {
            /// `table.field`, as the stats name it.
            let key: String
            /// The policy key whose rule applies (`records.note` for a shared rule), or nil.
            let ruleKey: String?
            let transform: Transform?
            /// The rule to apply, or nil when the field is unruled or dropped.
            let rule: FieldRule?
            /// `rule`'s transform: what a record's field is decided on, read without copying the
            /// rule (its bins, map and text) out of the plan per record (issue 28).
            let applies: Transform?

            init(key: String, ruleKey: String?, transform: Transform?, rule: FieldRule?) {
                self.key = key
                self.ruleKey = ruleKey
                self.transform = transform
                self.rule = rule
                applies = rule?.transform
            }
        }
        var fields: [Field]
        /// ``Deidentifier/publishesSameInstantsInUTC(_:)`` for this type, decided once.
        let sameInstantsInUTC: Bool

        init(table: String, policy: DeidentificationPolicy) {
            fields = Self.fieldNames.map { name in
                let key = "\(table).\(name)"
                let rule = policy.rule(table: table, field: name)
                let ruleKey = policy.fields[key] != nil ? key : (policy.fields["records.\(name)"] != nil ? "records.\(name)" : nil)
                return Field(key: key, ruleKey: ruleKey, transform: rule?.transform, rule: rule?.transform == .drop ? nil : rule)
            }
            sameInstantsInUTC = fields[0...1].allSatisfy { [nil, .shift, .keep].contains($0.applies) }
        }
    }

    let policy: DeidentificationPolicy
    let pseudonymizer: Pseudonymizer
    var shifter: DateShifter
    /// Whether every instant is written in UTC (`+00:00`) instead of each participant's standard
    /// offset: set when k-anonymity generalized the `utc_offset` column.
    package var publishesTimesInUTC: Bool {
        get { shifter.publishesInUTC }
        set { shifter.publishesInUTC = newValue }
    }
    /// Whether records carry their source (device class): false when k over what an
    /// acquaintance knows needed every source left out (``RecordAttributeGeneralizer``).
    package var publishesSources = true
    /// The scrubber built from the roster, with the protocol's words kept: nil while
    /// ``pendingScrubber`` is still building it (``awaitScrubber()``, or the first scrub, takes it).
    private var builtScrubber: Scrubber?
    /// The roster's scrubber being built on a thread of its own (``init(studyProtocol:recipient:recipientKey:shiftKey:scrubberBuild:referenceDate:createdAt:)``).
    private let pendingScrubber: BackgroundValue<Scrubber>?
    /// The protocol's own words the scrubber keeps (``vocabulary(of:)``).
    private let protocolWords: [String]

    /// Whether the rows carry instants (record start/end, consent signing, withdrawal), and so
    /// the participant's one UTC offset: the `utc_offset` column exists exactly then.
    package let publishesInstants: Bool

    /// Throws when the policy does not pseudonymize `participant.id`, the recipient key or the
    /// date-shift key is shorter than 16 bytes, or the date-shift settings are invalid.
    /// `recipientKey` makes the pseudonyms (per recipient); `shiftKey` (`Keystore.dateShiftKey()`)
    /// the date shifts, one per participant for every recipient. `createdAt` is the export's
    /// creation instant; nil (a preview) means the end of `referenceDate` in UTC.
    package init(
        studyProtocol: StudyProtocol, recipient: String, recipientKey: [UInt8], shiftKey: [UInt8], roster: [Participant],
        referenceDate: CivilDate, createdAt: Timestamp? = nil
    ) throws {
        try self.init(
            studyProtocol: studyProtocol, recipient: recipient, recipientKey: recipientKey, shiftKey: shiftKey,
            scrubber: (try Scrubber(roster: roster), nil), referenceDate: referenceDate, createdAt: createdAt)
    }

    /// As the roster initializer, with the roster's scrubber still being built by the caller (an
    /// export builds it from a roster read through a cursor, see ``RosterIdentifiers``, and starts
    /// it as soon as its snapshot holds the roster's identifiers: built in line, it kept the main
    /// thread waiting for the word lists, a core idle, and then on one core for the identifiers
    /// and patterns before the k-anonymity pass could start — issue 28). Rows that need no
    /// scrubber are made meanwhile; ``awaitScrubber()`` waits for it and throws what stopped its build, and a
    /// scrub before that waits for it too. The caller awaits it before anything it makes could
    /// need a scrub (``scrubsBeforeRecordTexts(_:)`` says when that is before the records).
    package init(
        studyProtocol: StudyProtocol, recipient: String, recipientKey: [UInt8], shiftKey: [UInt8], scrubberBuild: BackgroundValue<Scrubber>,
        referenceDate: CivilDate, createdAt: Timestamp? = nil
    ) throws {
        try self.init(
            studyProtocol: studyProtocol, recipient: recipient, recipientKey: recipientKey, shiftKey: shiftKey,
            scrubber: (nil, scrubberBuild), referenceDate: referenceDate, createdAt: createdAt)
    }

    private init(
        studyProtocol: StudyProtocol, recipient: String, recipientKey: [UInt8], shiftKey: [UInt8], scrubber: (built: Scrubber?, build: BackgroundValue<Scrubber>?),
        referenceDate: CivilDate, createdAt: Timestamp?
    ) throws {
        let policy = studyProtocol.deidentification
        guard policy.rule(table: "participant", field: "id")?.transform == .pseudonymize else {
            throw CohortError(
                .policy, "the de-identification policy does not pseudonymize participant.id",
                at: .init(field: "deidentification.fields.participant.id"),
                hint: "add `participant.id: pseudonymize`: exported rows are linked by the pseudonym")
        }
        guard recipientKey.count >= 16 else {
            throw CohortError(.security, "the recipient key is too short", hint: "derive it with Keystore.recipientKey(for:)")
        }
        guard shiftKey.count >= 16 else {
            throw CohortError(.security, "the date-shift key is too short", hint: "derive it with Keystore.dateShiftKey()")
        }
        self.studyProtocol = studyProtocol
        self.recipient = recipient
        self.referenceDate = referenceDate
        let created = createdAt ?? Timestamp(epochMilliseconds: Int64(referenceDate.daysSinceEpoch + 1) * 86_400_000 - 1)
        self.createdAt = created
        horizon = Timestamp(
            epochMilliseconds: created.epochMilliseconds - Int64(policy.dateShift.embargoDays) * 86_400_000, utcOffsetSeconds: created.utcOffsetSeconds)
        self.policy = policy
        publishesInstants = Self.publishesInstants(policy)
        pseudonymizer = Pseudonymizer(recipientKey: recipientKey)
        shifter = try DateShifter(key: shiftKey, policy: policy.dateShift)
        protocolWords = Self.vocabulary(of: studyProtocol)
        builtScrubber = scrubber.built?.keeping(protocolWords)
        pendingScrubber = scrubber.build
        recordPlans = DataType.allCases.map { RecordPlan(table: $0.rawValue, policy: policy) }
        recordFields = recordPlans.flatMap(\.fields)
        recordDecisions = recordFields.map { FieldDecision(applies: $0.applies, transform: $0.transform) }
        recordTallies = Array(repeating: 0, count: DataType.allCases.count * RecordPlan.fieldNames.count * Outcome.count)
    }

    /// Waits for the scrubber being built (``init(studyProtocol:recipient:recipientKey:shiftKey:scrubberBuild:referenceDate:createdAt:)``),
    /// and throws what stopped its build (the word lists missing); nothing once it is in.
    package mutating func awaitScrubber() throws {
        guard builtScrubber == nil, let pendingScrubber else { return }
        builtScrubber = try pendingScrubber.value().keeping(protocolWords)
    }

    /// The scrubber, for a scrub: waits for it if it is still being built. The caller of the
    /// building initializer awaits it before any scrub could come (``awaitScrubber()``), where a
    /// failed build throws; one that did not and meets a failed build is a bug, and stops here.
    private mutating func scrubberForUse() -> Scrubber {
        if builtScrubber == nil {
            do { try awaitScrubber() } catch { preconditionFailure("a scrub came before the export awaited its scrubber, whose build failed") }
        }
        guard let builtScrubber else { preconditionFailure("a de-identifier has neither a scrubber nor a build of one") }
        return builtScrubber
    }

    /// Whether `policy` scrubs anything but records' texts and notes (a participant's or a
    /// consent's field, a record's source): the participant and consent rows, and the
    /// k-anonymity pass's probe of sources, then need the scrubber before any record is written.
    package static func scrubsBeforeRecordTexts(_ policy: DeidentificationPolicy) -> Bool {
        policy.fields.contains { key, rule in
            guard rule.transform == .scrub else { return false }
            let parts = key.split(separator: ".", maxSplits: 1)
            guard parts.count == 2, parts[0] == "records" || DataType(rawValue: String(parts[0])) != nil else { return true }
            return parts[1] != "text" && parts[1] != "note"
        }
    }

    /// The protocol's own words free text may keep: its kinds and their units, its medication
    /// names (``StudyProtocol/medicationCodes``), its title and data types.
    package static func vocabulary(of studyProtocol: StudyProtocol) -> [String] {
        var words = Array(studyProtocol.medicationCodes.keys)
        // Apple Health metadata the protocol keeps arrives in the note as `Key=value`: its keys are the protocol's words.
        words += studyProtocol.importSettings.appleHealthKeepMetadata
        for (dataType, kinds) in studyProtocol.dataTypes {
            words.append(dataType.rawValue.replacingOccurrences(of: "_", with: " "))
            for kind in kinds {
                words.append(kind.rawValue.replacingOccurrences(of: "_", with: " "))
                words.append(kind.canonicalUnit)
            }
        }
        return words
    }

    /// Whether `policy` publishes any instant: a record's `start` or `end` in any data type,
    /// `consent.signed_at`, or the withdrawal instant (`participant.enrolled_on` with `status`).
    package static func publishesInstants(_ policy: DeidentificationPolicy) -> Bool {
        func kept(_ table: String, _ field: String) -> Bool {
            guard let rule = policy.rule(table: table, field: field) else { return false }
            return rule.transform != .drop
        }
        if kept("consent", "signed_at") || (kept("participant", "enrolled_on") && kept("participant", "status")) { return true }
        return DataType.allCases.contains { kept($0.rawValue, "start") || kept($0.rawValue, "end") }
    }

    /// The participant's pseudonym for this recipient.
    public func pseudonym(of participant: Participant) -> String { pseudonymizer.pseudonym(for: participant.id) }

    // MARK: Rows

    /// The de-identified participant row.
    public mutating func participant(_ p: Participant) -> DeidentifiedParticipant {
        counted.participants += 1
        var row = DeidentifiedParticipant(pseudonym: pseudonymizer.pseudonym(for: p.id))
        countApplied("participant", "id")
        var shift = shifter.shift(for: p, reference: createdAt)
        let identity = p.identity
        if publishesInstants { row.utcOffset = shift.publishedOffset }
        removeDirectIdentifiers(of: identity)
        participantAge(p, offset: shift.days, into: &row)
        participantZip(identity?.zip, into: &row)
        participantSex(p.sex, into: &row)
        participantEnrollment(p, shift: &shift, into: &row)
        participantStatus(p.status, into: &row)
        if let rule = rule("participant", "time_zone", present: true) {
            row.timeZone = text(p.timeZone, rule, field: "participant.time_zone")
        }
        participantDevices(identity?.devices ?? [], into: &row)
        return row
    }

    /// Counts the direct identifiers the row never carries (code, name, contact, address, MRN).
    private mutating func removeDirectIdentifiers(of identity: ParticipantIdentity?) {
        removeDirect("participant.code", present: true)
        removeDirect("participant.name", present: identity != nil)
        removeDirect("participant.email", present: identity?.email != nil)
        removeDirect("participant.phone", present: identity?.phone != nil)
        removeDirect("participant.address", present: identity?.address != nil)
        removeDirect("participant.mrn", present: identity?.mrn != nil)
    }

    /// Birth year and age band; anyone 90 or older (at enrolment or now) is in the top band only.
    private mutating func participantAge(_ p: Participant, offset: Int, into row: inout DeidentifiedParticipant) {
        let birthDate = p.identity?.birthDate
        var over89 = false
        var ageAtEnrollment: Int?
        if let birthDate {
            let age = birthDate.age(on: p.enrolledOn)
            ageAtEnrollment = age
            over89 = max(age, birthDate.age(on: referenceDate)) >= 90
        }
        if let rule = rule("participant", "birth_date", present: birthDate != nil), let birthDate {
            switch rule.transform {
            case .year, .keep, .shift:
                if over89 {
                    row.ageBand = SafeHarbor.topAgeBand
                } else {
                    row.birthYear = rule.transform == .shift ? birthDate.adding(days: offset).year : birthDate.year
                }
                countApplied("participant", "birth_date")
            default: unsupported("participant.birth_date")
            }
        }
        if let rule = rule("participant", "age", present: ageAtEnrollment != nil), let age = ageAtEnrollment {
            switch rule.transform {
            case .ageBand, .generalize:
                row.ageBand = over89 ? SafeHarbor.topAgeBand : SafeHarbor.ageBand(age, bins: rule.bins)
                countApplied("participant", "age")
            case .keep:
                row.ageBand = over89 ? SafeHarbor.topAgeBand : String(age)
                countApplied("participant", "age")
            default: unsupported("participant.age")
            }
        }
    }

    private mutating func participantZip(_ zip: String?, into row: inout DeidentifiedParticipant) {
        guard let rule = rule("participant", "zip", present: zip != nil), let zip else { return }
        switch rule.transform {
        case .zip3, .keep:
            row.zip3 = SafeHarbor.zip3(zip)
            countApplied("participant", "zip")
        case .generalize:
            row.zip3 = SafeHarbor.zip3(zip).map { generalize($0, map: rule.map, other: rule.other) }
            countApplied("participant", "zip")
        default: unsupported("participant.zip")
        }
    }

    private mutating func participantSex(_ sex: Sex, into row: inout DeidentifiedParticipant) {
        guard let rule = rule("participant", "sex", present: true) else { return }
        switch rule.transform {
        case .keep:
            row.sex = sex
            countApplied("participant", "sex")
        case .generalize:
            row.sex = Sex(rawValue: generalize(sex.rawValue, map: rule.map, other: rule.other)) ?? .other
            countApplied("participant", "sex")
        default: unsupported("participant.sex")
        }
    }

    /// Enrolment date and withdrawal instant, shifted; either is left out when it falls after
    /// the export's creation.
    private mutating func participantEnrollment(_ p: Participant, shift: inout ParticipantShift, into row: inout DeidentifiedParticipant) {
        guard let rule = rule("participant", "enrolled_on", present: true),
            let date = civilDate(p.enrolledOn, rule, offset: shift.days, field: "participant.enrolled_on")
        else { return }
        if date > horizon.localDate {
            counted.leftOutAfterCreation["participant.enrolled_on", default: 0] += 1
        } else {
            row.enrolledOn = date
            countApplied("participant", "enrolled_on")
        }
        if let instant = p.withdrawnAt, let withdrawn = shifted(instant, rule.transform, shift: &shift) {
            if withdrawn > horizon {
                counted.leftOutAfterCreation["participant.withdrawn_at", default: 0] += 1
            } else {
                row.withdrawnAt = withdrawn
            }
        }
    }

    private mutating func participantStatus(_ status: ParticipantStatus, into row: inout DeidentifiedParticipant) {
        guard let rule = rule("participant", "status", present: true) else { return }
        switch rule.transform {
        case .keep:
            row.status = status
            countApplied("participant", "status")
        case .generalize:
            row.status = ParticipantStatus(rawValue: generalize(status.rawValue, map: rule.map, other: rule.other))
            countApplied("participant", "status")
        default: unsupported("participant.status")
        }
    }

    /// Device names, scrubbed even under `keep` (they are identifiers), each once.
    private mutating func participantDevices(_ devices: [String], into row: inout DeidentifiedParticipant) {
        guard let rule = rule("participant", "devices", present: !devices.isEmpty), !devices.isEmpty else { return }
        var effective = rule
        if rule.transform == .keep { effective.transform = .scrub }
        var out: [String] = []
        for device in devices {
            guard let value = text(device, effective, field: nil) else { continue }
            if !out.contains(value) { out.append(value) }
        }
        if !out.isEmpty {
            row.devices = out
            countApplied("participant", "devices")
        }
    }

    /// The de-identified consent row of participant `p`.
    public mutating func consent(_ c: Consent, of p: Participant) -> DeidentifiedConsent {
        counted.consents += 1
        var row = DeidentifiedConsent(pseudonym: pseudonymizer.pseudonym(for: p.id))
        removeDirect("consent.signature", present: true)
        if let rule = rule("consent", "version", present: true) { row.version = text(c.version, rule, field: "consent.version") }
        if let rule = rule("consent", "document_sha256", present: true) {
            if rule.transform == .keep {
                row.documentSHA256 = c.documentSHA256
                countApplied("consent", "document_sha256")
            } else {
                unsupported("consent.document_sha256")
            }
        }
        if let rule = rule("consent", "signed_at", present: true) {
            var shift = shifter.shift(for: p, reference: createdAt)
            if let signed = shifted(c.signedAt, rule.transform, shift: &shift) {
                // Embargoed like records (issue 27): a signing published past the horizon would
                // bound the shift. Consents are published oldest first, so `cohort verify` orders
                // an undated one after the dated ones; it governs no published record (every
                // record after it is past the horizon too).
                if signed > horizon {
                    counted.leftOutAfterCreation["consent.signed_at", default: 0] += 1
                } else {
                    row.signedAt = signed
                    countApplied("consent", "signed_at")
                }
            } else {
                unsupported("consent.signed_at")
            }
        }
        if let rule = rule("consent", "sharing", present: true) { row.sharing = text(c.sharing.rawValue, rule, field: "consent.sharing") }
        if let rule = rule("consent", "status", present: true) { row.status = text(c.status.rawValue, rule, field: "consent.status") }
        return row
    }

    /// The de-identified record row of participant `p`, or nil when its published start or end
    /// would be after ``horizon``, or its kind is exogenous and the policy leaves such records out
    /// (the record is left out and counted).
    public mutating func record(_ r: Record, of p: Participant) -> DeidentifiedRecord? {
        var state = participantState(p)
        let row = record(r, of: p, state: &state)
        lastRecordParticipant = consume state
        return row
    }

    /// ``record(_:of:)`` with participant `p`'s state held by the caller
    /// (``participantState(for:)``), for a caller that de-identifies a run of one participant's
    /// records (the export's record workers): the state (about 160 bytes) is not moved out of
    /// this de-identifier and back for each record (issue 28, seventeenth round).
    package mutating func record(_ r: Record, of p: Participant, state: inout RecordParticipant) -> DeidentifiedRecord? {
        guard let head = recordHead(r, shift: &state.shift) else { return nil }
        var row = DeidentifiedRecord(pseudonym: state.pseudonym, kind: r.kind)
        row.start = head.start
        row.end = head.end
        recordContent(r, of: p, head.base, state: &state, into: &row)
        return row
    }

    /// The participant's pseudonym and shift, moved out of the cache (`take`: no copy, no
    /// retain), so the caller alone holds the shift and its series tracks are updated in place;
    /// the caller moves it back with `consume` (issue 28: copying it in and out was about 1 % of
    /// the export's CPU; a `defer` that assigns it back copies it and destroys the original).
    private mutating func participantState(_ p: Participant) -> RecordParticipant {
        if let cached = lastRecordParticipant.take(), cached.id == p.id { return cached }
        return participantState(for: p)
    }

    /// What ``record(_:of:)`` and ``publishedStartAndSource(_:of:)`` decide from the record's
    /// kind and instants alone: where its type's fields are (`base`, ``recordFields``) and the
    /// published start and end, or nil when the record is left out (exogenous, or after
    /// ``horizon``; counted). Counts the record and its start and end fields. Reads only `r`'s
    /// kind, start and end.
    private mutating func recordHead(_ r: Record, shift: inout ParticipantShift) -> (base: Int, start: Timestamp?, end: Timestamp?)? {
        if policy.dateShift.exogenous == .drop, policy.dateShift.isExogenous(r.kind) {
            counted.leftOutExogenous[r.kind.rawValue, default: 0] += 1
            return nil
        }
        // The case index is the type's place in `allCases` (CaseHash; KindHashingTests).
        let base = r.kind.dataType.caseIndex * RecordPlan.fieldNames.count
        // Field order as in RecordPlan.fieldNames: start, end, value, unit, text, source, note.
        // The instants first: a record dated after the export's creation is left out whole.
        let (start, end) = recordInstants(r, base, shift: &shift)
        if let start, start > horizon {
            counted.leftOutAfterCreation["records", default: 0] += 1
            return nil
        }
        if let end, end > horizon {
            counted.leftOutAfterCreation["records", default: 0] += 1
            return nil
        }
        counted.records += 1
        if decides(base, 0, present: true) { tally(base, 0, start == nil ? .unsupported : .applied) }
        if r.end != nil, decides(base, 1, present: true) { tally(base, 1, end == nil ? .unsupported : .applied) }
        return (base, start, end)
    }

    /// The record's published start and end (shifted as their rules say; dense series continue
    /// on elapsed time across wall-clock jumps, so no DST trace).
    private func recordInstants(_ r: Record, _ base: Int, shift: inout ParticipantShift) -> (start: Timestamp?, end: Timestamp?) {
        let startRule = recordDecisions[base].applies
        let endRule = r.end == nil ? nil : recordDecisions[base + 1].applies
        if startRule == .shift, endRule == nil || endRule == .shift {
            let series = shift.shiftSeries(r.kind, start: r.start, end: endRule == nil ? nil : r.end)
            return (series.start, series.end)
        }
        let start = startRule.flatMap { shifted(r.start, $0, shift: &shift) }
        let end = endRule.flatMap { rule in r.end.flatMap { shifted($0, rule, shift: &shift) } }
        return (start, end)
    }

    /// The record's value (holidays masked when asked), unit, and its free texts scrubbed.
    /// Reads the participant's shift in place (a copy of ``ParticipantShift`` retains its zone and
    /// series arrays) and a field's plan entry only when its rule's contents are needed.
    private mutating func recordContent(_ r: Record, of p: Participant, _ base: Int, state: inout RecordParticipant, into row: inout DeidentifiedRecord) {
        let days = state.shift.days
        let realValue =
            policy.dateShift.maskHolidays && recordDecisions[base].applies == .shift ? maskedHoliday(r, of: p, zone: state.shift.zone) : r.value
        if decides(base, 2, present: realValue != nil), let value = realValue {
            switch recordDecisions[base + 2].applies {
            case .keep:
                row.value = value
                tally(base, 2, .applied)
            case .generalize where recordFields[base + 2].rule?.bins?.isEmpty == false:
                row.valueLabel = SafeHarbor.label(value, edges: recordFields[base + 2].rule?.bins ?? [])
                tally(base, 2, .applied)
            default: tally(base, 2, .unsupported)
            }
        }
        if decides(base, 3, present: true) {
            if recordDecisions[base + 3].applies == .keep {
                row.unit = r.unit
                tally(base, 3, .applied)
            } else {
                tally(base, 3, .unsupported)
            }
        }
        if decides(base, 4, present: r.text != nil), let value = r.text {
            row.text = scrubbedText(value, base + 4, state: &state) ?? recordText(value, recordFields[base + 4], shiftDays: days)
            tally(base, 4, row.text == nil ? .unsupported : .applied)
        }
        if publishesSources, decides(base, 5, present: r.source != nil), let value = r.source {
            row.source = publishedSource(value, base + 5, base, state: &state)
            tally(base, 5, row.source == nil ? .unsupported : .applied)
        }
        if decides(base, 6, present: r.note != nil), let value = r.note {
            row.note = recordText(value, recordFields[base + 6], shiftDays: days)
            tally(base, 6, row.note == nil ? .unsupported : .applied)
        }
    }

    /// The record's published start and source (what ``AcquaintanceProfile`` needs), or nil when
    /// the record is not published: ``record(_:of:)`` without the value, unit, text and note (no
    /// text is scrubbed, no row is built). Counts as ``record(_:of:)`` does, so call it on a copy
    /// whose counts are discarded.
    /// It reads only `r`'s kind, instants and source (``startAndSourceFields(of:)``), so what it
    /// returns cannot depend on the fields a caller may drop before it.
    package mutating func publishedStartAndSource(_ r: Record, of p: Participant) -> (start: Timestamp?, source: String?)? {
        var state = participantState(p)
        let published = publishedStartAndSource(r, state: &state)
        lastRecordParticipant = consume state
        return published
    }

    /// ``publishedStartAndSource(_:of:)`` with the participant's state held by the caller
    /// (``participantState(for:)``), for a caller that probes a run of one participant's records:
    /// the state (about 160 bytes) is not moved out of this de-identifier and back for each
    /// record (issue 28, seventeenth round: 1 % of the CSV + JSON export's CPU in the k-anonymity
    /// pass's `memcpy`).
    mutating func publishedStartAndSource(_ r: Record, state: inout RecordParticipant) -> (start: Timestamp?, source: String?)? {
        guard let head = recordHead(r, shift: &state.shift) else { return nil }
        var source: String?
        if publishesSources, recordDecisions[head.base + 5].applies != nil, let value = r.source {
            source = publishedSource(value, head.base + 5, head.base, state: &state)
        }
        return (head.start, source)
    }

    /// Participant `p`'s pseudonym and shift, for ``publishedStartAndSource(_:state:)`` and
    /// ``record(_:of:state:)``: made anew (the de-identifier's own last participant is left as it is).
    package func participantState(for p: Participant) -> RecordParticipant {
        RecordParticipant(id: p.id, pseudonym: pseudonymizer.pseudonym(for: p.id), shift: shifter.shift(for: p, reference: createdAt))
    }

    /// A record's source as published under the rule of ``recordFields``' entry `field` (the
    /// type's at `base`): ``recordText(_:_:shiftDays:)``.
    /// A participant's records come from a few devices, so under `generalize` (a hash into the
    /// rule's map, and case-folding on a miss) the last source is remembered with what it became,
    /// per participant and type, and a record with the same bytes takes that (issue 28). Bytes,
    /// not `==`: two canonically equivalent texts are equal strings but need not publish the same.
    /// Other rules are not remembered (`keep` costs nothing; `scrub` counts what it finds).
    private mutating func publishedSource(_ value: String, _ field: Int, _ base: Int, state: inout RecordParticipant) -> String? {
        guard recordDecisions[field].applies == .generalize else {
            return scrubbedText(value, field, state: &state) ?? recordText(value, recordFields[field], shiftDays: state.shift.days)
        }
        if let last = state.lastSource, last.base == base, Self.sameBytes(last.raw, value) { return last.published }
        let published = recordText(value, recordFields[field], shiftDays: state.shift.days)
        state.lastSource = SourceMemo(base: base, raw: value, published: published)
        return published
    }

    /// A record's text or source under `scrub` (``recordFields``' entry `field`), or nil under any
    /// other rule. A participant's texts repeat (a medication's name on every dose; the bench's
    /// 20,752 doses name two), and scrubbing one took about 9 µs (issue 28: 0.18 s, 1.6 % of the
    /// export's CPU at bench M), so the participant's last few are remembered with what they
    /// became and what the scrubber counted in them; a text with the same bytes takes that and
    /// adds those counts again. The scrubber is a function of the text and the participant's
    /// shift alone, so the row and the report are those of scrubbing it again (tested). Notes are
    /// not remembered: free text rarely repeats.
    private mutating func scrubbedText(_ value: String, _ field: Int, state: inout RecordParticipant) -> String? {
        guard recordFields[field].applies == .scrub else { return nil }
        if let memo = state.scrubbed.first(where: { Self.sameBytes($0.raw, value) }) {
            counted.scrubTokens.merge(memo.counts)
            return memo.published
        }
        var found = ScrubCounts()
        let published = scrubberForUse().scrub(value, counts: &found, shiftDays: state.shift.days)
        counted.scrubTokens.merge(found)
        let memo = ScrubMemo(raw: value, published: published, counts: found)
        if state.scrubbed.count == ScrubMemo.limit { state.scrubbed.removeFirst() }
        state.scrubbed.append(memo)
        return published
    }

    /// Whether `a` and `b` hold the same UTF-8 bytes.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard a.utf8.count == b.utf8.count else { return false }
        let contiguous = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
        return (contiguous ?? nil) ?? a.utf8.elementsEqual(b.utf8)
    }

    /// Whether the records of `type` are published at the same instants (milliseconds) once every
    /// time is written in UTC (``publishesTimesInUTC``), only at offset 0: an allow-list — their
    /// start and end rules are each `shift`, `keep` or none, which place an instant without
    /// looking at the published offset (``ParticipantShift``). Any other rule (`year` anchors at
    /// midnight of the published offset) may move the instant, and a caller that needs the UTC
    /// start must probe a de-identifier that publishes in UTC.
    package func publishesSameInstantsInUTC(_ type: DataType) -> Bool {
        recordPlans[type.caseIndex].sameInstantsInUTC
    }

    /// `r` as ``publishedStartAndSource(_:of:)`` reads it: participant, kind, instants and source,
    /// without the value, text and note. A pass that holds many records for it (the export's
    /// k-anonymity profiles) keeps these only.
    package static func startAndSourceFields(of r: Record) -> Record {
        Record(participantID: r.participantID, kind: r.kind, start: r.start, end: r.end, source: r.source)
    }

    /// The value of `r`, or — for a day total (a record about a day long) on a public holiday of
    /// the participant's region — the same kind's total on the same weekday last, times 1 ± up
    /// to 10% (keyed noise), rounded like the real one. Counted in
    /// ``DeidentificationStats/maskedHolidayValues``.
    private mutating func maskedHoliday(_ r: Record, of p: Participant, zone: TimeZone) -> Double? {
        guard let value = r.value, let end = r.end, abs(end.epochMilliseconds - r.start.epochMilliseconds - 86_400_000) <= 3_600_000 else {
            return r.value
        }
        if holidayMask?.id != p.id { holidayMask = (p.id, PublicHolidays.region(forZone: p.timeZone), [:]) }
        guard let region = holidayMask?.region else { return value }
        let local = r.start.epochMilliseconds + Int64(zone.secondsFromGMT(for: r.start.date)) * 1000
        let day = Int(Timestamp.floorDiv(local + 3 * 3_600_000, 86_400_000))
        let weekday = CivilDate(daysSinceEpoch: day).isoWeekday
        guard PublicHolidays.isHoliday(day, in: region) else {
            holidayMask?.last[r.kind, default: [:]][weekday] = value
            return value
        }
        guard let previous = holidayMask?.last[r.kind]?[weekday] else { return value }
        counted.maskedHolidayValues += 1
        let masked = previous * (1 + 0.1 * shifter.noise(for: p.id, day: day))
        return value == value.rounded() ? masked.rounded() : masked
    }

    /// Whether a record field (its type's at `base`) has a rule to apply; false when unruled or
    /// dropped — tallying a present value that is dropped, as ``rule(_:_:present:)`` counts it.
    private mutating func decides(_ base: Int, _ field: Int, present: Bool) -> Bool {
        let decision = recordDecisions[base + field]
        if decision.applies != nil { return true }
        if present { tally(base, field, decision.transform == nil ? .unruled : .applied) }
        return false
    }

    private mutating func tally(_ base: Int, _ field: Int, _ outcome: Outcome) {
        recordTallies[(base + field) * Outcome.count + outcome.rawValue] += 1
    }

    // MARK: Transforms

    /// The rule for `table.field`, or nil (dropped) — counting an unruled present value.
    private mutating func rule(_ table: String, _ field: String, present: Bool) -> FieldRule? {
        guard let rule = policy.rule(table: table, field: field) else {
            if present { counted.droppedUnruled["\(table).\(field)", default: 0] += 1 }
            return nil
        }
        if rule.transform == .drop {
            if present { countApplied(table, field) }
            return nil
        }
        return rule
    }

    private mutating func countApplied(_ table: String, _ field: String) {
        let key = "\(table).\(field)"
        let ruleKey = policy.fields[key] != nil ? key : "records.\(field)"
        guard let rule = policy.fields[ruleKey] else { return }
        counted.countApplied(key, rule: ruleKey, transform: rule.transform)
    }

    private mutating func removeDirect(_ field: String, present: Bool) {
        if present { counted.directIdentifiersRemoved[field, default: 0] += 1 }
    }

    private mutating func unsupported(_ field: String) {
        counted.droppedUnsupported[field, default: 0] += 1
    }

    private func split(_ field: String) -> (String, String) {
        guard let dot = field.firstIndex(of: ".") else { return (field, "") }
        return (String(field[..<dot]), String(field[field.index(after: dot)...]))
    }

    /// Text through `keep`, `scrub` or `generalize`; counts under `field` when given.
    /// `shiftDays`: the participant's date-shift offset, for dates written in the text.
    private mutating func text(_ value: String, _ rule: FieldRule, field: String?, shiftDays: Int? = nil) -> String? {
        let result = transformedText(value, rule.transform, map: rule.map, other: rule.other, shiftDays: shiftDays)
        if let field {
            let (table, name) = split(field)
            if result == nil { unsupported(field) } else { countApplied(table, name) }
        }
        return result
    }

    /// A record's text field through its plan entry's rule: ``text(_:_:field:shiftDays:)`` with
    /// nothing counted under a field name, reading the rule's map and text in place.
    private mutating func recordText(_ value: String, _ field: RecordPlan.Field, shiftDays: Int) -> String? {
        guard let transform = field.applies else { return nil }
        return transformedText(value, transform, map: field.rule?.map, other: field.rule?.other, shiftDays: shiftDays)
    }

    /// Text through `keep`, `scrub` or `generalize` (`map`, `other`); nil for any other transform.
    private mutating func transformedText(_ value: String, _ transform: Transform, map: [String: String]?, other: String?, shiftDays: Int?) -> String? {
        switch transform {
        case .keep: value
        case .scrub: scrubberForUse().scrub(value, counts: &counted.scrubTokens, shiftDays: shiftDays)
        case .generalize: generalize(value, map: map, other: other)
        default: nil
        }
    }

    /// `value` mapped through the rule's `map` (exact, then case-insensitive), else `other`.
    private func generalize(_ value: String, map: [String: String]?, other: String?) -> String {
        let fallback = other ?? "other"
        guard let map else { return fallback }
        if let mapped = map[value] { return mapped }
        let folded = value.lowercased()
        for (key, mapped) in map where key.lowercased() == folded { return mapped }
        // An Apple hardware identifier (`Watch6,2`) maps as its family (`Apple Watch`) when the map names that.
        if let family = DeviceFamily.apple(value), let mapped = map[family] { return mapped }
        return fallback
    }

    /// `value` under a date rule (`shift`, `keep`, `year`), written at the participant's published
    /// offset, or nil when the transform does not apply.
    private func shifted(_ value: Timestamp, _ transform: Transform, shift: inout ParticipantShift) -> Timestamp? {
        switch transform {
        case .shift: shift.shift(value)
        case .keep: shift.published(value)
        case .year: shift.yearStart(value)
        default: nil
        }
    }

    private mutating func civilDate(_ value: CivilDate, _ rule: FieldRule, offset: Int, field: String) -> CivilDate? {
        switch rule.transform {
        case .shift: return value.adding(days: offset)
        case .keep: return value
        case .year: return CivilDate(year: value.year, month: 1, day: 1)
        default:
            unsupported(field)
            return nil
        }
    }

    // MARK: Policy warnings

    /// Policy choices below the Safe Harbor floor, and rules this de-identifier overrides.
    public static func warnings(for studyProtocol: StudyProtocol) -> [String] {
        let policy = studyProtocol.deidentification
        var result: [String] = []
        for key in policy.fields.keys.sorted() {
            guard let rule = policy.fields[key] else { continue }
            let field = key.split(separator: ".").last.map(String.init) ?? key
            if directIdentifiers.contains(key), rule.transform != .drop {
                result.append("\(key): `\(rule.transform.rawValue)` ignored; direct identifiers are always removed")
            }
            guard rule.transform == .keep else { continue }
            switch field {
            case "enrolled_on", "signed_at", "start", "end":
                result.append("\(key): `keep` exports real dates; Safe Harbor requires `shift` or `year`")
            case "birth_date": result.append("\(key): `keep` is exported as the birth year")
            case "zip": result.append("\(key): `keep` is exported as ZIP3")
            case "devices": result.append("\(key): `keep` is applied as `scrub`; device names are identifiers")
            case "note", "text", "source":
                result.append("\(key): free text kept unscrubbed; only the residual scan guards it")
            default: break
            }
        }
        for signal in TimeSignals.recoverable(studyProtocol) { result.append("date_shift: \(signal.statement)") }
        if policy.dateShift.maxDays == 0, policy.fields.values.contains(where: { $0.transform == .shift }) {
            result.append("date_shift.max_days is 0: `shift` leaves dates unchanged")
        }
        return result
    }
}
