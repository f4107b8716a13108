/// What the de-identifier hands the writers. Every field is optional: nil means the policy
/// dropped it (or named no rule for it), and writers leave such columns out entirely.

/// A participant after de-identification.
public struct DeidentifiedParticipant: Sendable, Hashable, Codable {
    /// The recipient-keyed pseudonym (`participant.id: pseudonymize`). Always present: rows
    /// without it could not be linked, so an export refuses a policy that drops it.
    public var pseudonym: String
    public var sex: Sex?
    /// Year of birth (`participant.birth_date: year`); nil for ages ≥ 90.
    package var birthYear: Int?
    /// Age band at enrollment (`participant.age: age_band`), `90+` at the top.
    package var ageBand: String?
    /// First three ZIP digits, `000` for restricted prefixes (`participant.zip: zip3`).
    package var zip3: String?
    /// Shifted enrollment date.
    public var enrolledOn: CivilDate?
    public var status: ParticipantStatus?
    /// Shifted withdrawal instant, for `stop` participants.
    package var withdrawnAt: Timestamp?
    /// Generalized time zone or device group, when the policy keeps one.
    public var timeZone: String?
    /// Device names after `generalize` (e.g. `smartwatch`), when kept.
    public var devices: [String]?
    /// The one UTC offset every published time of this participant is written at (`-05:00`):
    /// the standard offset of their time zone, so DST changes cannot reveal the date shift.
    /// Published times of day reveal it anyway, so it is a quasi-identifier.
    package var utcOffset: String?
    /// The birth year generalized for k-anonymity (`1980–1984`, `1980–1989`); `birthYear` is
    /// then nil.
    package var birthYearRange: String?
    /// The enrollment date generalized for k-anonymity (`2025-03`, `2025-Q1`, `2025`);
    /// `enrolledOn` is then nil.
    package var enrollmentPeriod: String?
    /// The withdrawal instant generalized for k-anonymity, like `enrollmentPeriod`;
    /// `withdrawnAt` is then nil.
    package var withdrawalPeriod: String?

    package init(pseudonym: String) { self.pseudonym = pseudonym }

    enum CodingKeys: String, CodingKey {
        case pseudonym, sex, status, devices
        case birthYear = "birth_year"
        case ageBand = "age_band"
        case zip3
        case enrolledOn = "enrolled_on"
        case withdrawnAt = "withdrawn_at"
        case timeZone = "time_zone"
        case utcOffset = "utc_offset"
        case birthYearRange = "birth_year_range"
        case enrollmentPeriod = "enrollment_period"
        case withdrawalPeriod = "withdrawal_period"
    }
}

/// A consent row after de-identification.
public struct DeidentifiedConsent: Sendable, Hashable, Codable {
    public var pseudonym: String
    public var version: String?
    public var documentSHA256: String?
    /// Shifted signing instant.
    public var signedAt: Timestamp?
    /// `broad` or `study-only`.
    public var sharing: String?
    /// `active`, `superseded` or `withdrawn`.
    public var status: String?

    package init(pseudonym: String) { self.pseudonym = pseudonym }

    enum CodingKeys: String, CodingKey {
        case pseudonym, version, sharing, status
        case documentSHA256 = "document_sha256"
        case signedAt = "signed_at"
    }
}

/// A record after de-identification.
public struct DeidentifiedRecord: Sendable, Hashable, Codable {
    public var pseudonym: String
    public var kind: RecordKind
    /// Shifted start (nil only if the policy drops it).
    public var start: Timestamp?
    public var end: Timestamp?
    /// The number, in `kind.canonicalUnit`, when kept as is.
    public var value: Double?
    /// The bin label when the value was generalized (`value: generalize`).
    package var valueLabel: String?
    public var unit: String?
    /// Medication name or trigger list, possibly scrubbed or generalized.
    public var text: String?
    public var source: String?
    /// Scrubbed free text.
    public var note: String?

    package init(pseudonym: String, kind: RecordKind) {
        self.pseudonym = pseudonym
        self.kind = kind
    }

    enum CodingKeys: String, CodingKey {
        case pseudonym, kind, start, end, value, unit, text, source, note
        case valueLabel = "value_label"
    }
}
