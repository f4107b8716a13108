public import Foundation

/// One observation or event for a participant, validated and in its kind's canonical unit.
public struct Record: Sendable, Hashable, Codable {
    /// The participant's internal id (never an identifier).
    public var participantID: UUID
    public var kind: RecordKind
    /// When the observation starts (or happened), with the offset it was observed at.
    public var start: Timestamp
    /// When a period ends (sleep, steps over a day, a flare); nil for point observations.
    public var end: Timestamp?
    /// The value in `kind.canonicalUnit`.
    public var value: Double?
    /// A text value: medication name, migraine triggers (`;`-separated vocabulary).
    public var text: String?
    /// Where the data came from: app name or device model. Device names are identifiers.
    public var source: String?
    /// Free text the participant typed. Treated as containing identifiers.
    public var note: String?

    public init(
        participantID: UUID, kind: RecordKind, start: Timestamp, end: Timestamp? = nil, value: Double? = nil,
        text: String? = nil, source: String? = nil, note: String? = nil
    ) {
        self.participantID = participantID
        self.kind = kind
        self.start = start
        self.end = end
        self.value = value
        self.text = text
        self.source = source
        self.note = note
    }

    /// The unit `value` is in.
    public var unit: String { kind.canonicalUnit }
}

/// The fields a record has, as named by de-identification rules (`symptom_log.note`).
package enum RecordField: String, Sendable, Codable, CaseIterable {
    case participant
    case kind
    case start
    case end
    case value
    case unit
    case text
    case source
    case note
}
