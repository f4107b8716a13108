public import Foundation

/// Sex as recorded at enrollment (administrative, mapped to FHIR `gender`).
public enum Sex: String, Sendable, Codable, CaseIterable {
    case female
    case male
    case other
    case unknown

    /// Parses common spellings (`F`, `female`, `M`, `male`, `other`, `unknown`, empty).
    package init?(lenient text: String) {
        switch text.lowercased().trimmingCharacters(in: .whitespaces) {
        case "f", "female", "w", "woman": self = .female
        case "m", "male", "man": self = .male
        case "o", "other", "x", "diverse", "nonbinary", "non-binary": self = .other
        case "", "u", "unknown", "undisclosed": self = .unknown
        default: return nil
        }
    }
}

/// Where a participant stands in the study.
public enum ParticipantStatus: String, Sendable, Codable, CaseIterable {
    /// Enrolled, data accepted.
    case active
    /// Withdrawn in `stop` mode: no new data; existing data stays in exports.
    case stopped
    /// Withdrawn in `exclude` mode: no new data, left out of every later export.
    case excluded
    /// Withdrawn in `erase` mode: identifiers and records deleted.
    case erased

    package var isWithdrawn: Bool { self != .active }
}

/// A participant's direct identifiers. Stored encrypted; shown only on request.
public struct ParticipantIdentity: Sendable, Hashable, Codable {
    public var name: String
    public var email: String?
    public var phone: String?
    public var birthDate: CivilDate?
    public var address: String?
    public var zip: String?
    public var mrn: String?
    public var devices: [String]

    package init(
        name: String, email: String? = nil, phone: String? = nil, birthDate: CivilDate? = nil, address: String? = nil,
        zip: String? = nil, mrn: String? = nil, devices: [String] = []
    ) {
        self.name = name
        self.email = email
        self.phone = phone
        self.birthDate = birthDate
        self.address = address
        self.zip = zip
        self.mrn = mrn
        self.devices = devices
    }

    enum CodingKeys: String, CodingKey {
        case name, email, phone, address, zip, mrn, devices
        case birthDate = "birth_date"
    }
}

/// A participant as the coordinator sees them.
public struct Participant: Sendable, Hashable, Codable {
    /// Random id made at enrollment, never derived from identity; used in audit events.
    public var id: UUID
    /// The study code (`P-0001`): itself an identifier, never exported.
    public var code: String
    public var sex: Sex
    /// IANA time zone identifier; participant-days are counted in it.
    public var timeZone: String
    public var enrolledOn: CivilDate
    public var status: ParticipantStatus
    /// When the participant withdrew, if they did.
    package var withdrawnAt: Timestamp?
    /// Direct identifiers; nil when not decrypted or erased.
    public var identity: ParticipantIdentity?
    /// The study site the participant belongs to (multi-site studies); nil in a single-site study.
    /// A site name is an organisational label (`site-a`, `charite`), never exported.
    public var site: String?

    package init(
        id: UUID, code: String, sex: Sex, timeZone: String, enrolledOn: CivilDate, status: ParticipantStatus = .active,
        withdrawnAt: Timestamp? = nil, identity: ParticipantIdentity? = nil, site: String? = nil
    ) {
        self.site = site
        self.id = id
        self.code = code
        self.sex = sex
        self.timeZone = timeZone
        self.enrolledOn = enrolledOn
        self.status = status
        self.withdrawnAt = withdrawnAt
        self.identity = identity
    }

    enum CodingKeys: String, CodingKey {
        case id, code, sex, status, identity, site
        case timeZone = "time_zone"
        case enrolledOn = "enrolled_on"
        case withdrawnAt = "withdrawn_at"
    }
}

/// The fields of a participant as named by de-identification rules (`participant.zip`).
package enum ParticipantField: String, Sendable, Codable, CaseIterable {
    case id
    case code
    case name
    case email
    case phone
    case birthDate = "birth_date"
    case age
    case sex
    case address
    case zip
    case mrn
    case devices
    case timeZone = "time_zone"
    case enrolledOn = "enrolled_on"
    case status
}

/// The fields of a consent as named by de-identification rules (`consent.signed_at`).
package enum ConsentField: String, Sendable, Codable, CaseIterable {
    case version
    case documentHash = "document_sha256"
    case signedAt = "signed_at"
    case signature
    case sharing
    case status
}
