package import CohortCore

/// Counts a ``Deidentifier`` accumulates as rows pass through it: what each rule did, what was
/// dropped for want of a rule, which direct identifiers were removed, and scrub tokens.
/// A value: merge the stats of several deidentifiers (one per worker) with ``merge(_:)``.
package struct DeidentificationStats: Sendable, Hashable {
    /// A field's rule and how many values it transformed.
    package struct Applied: Sendable, Hashable {
        /// The policy key the rule came from (`records.note` for a shared rule).
        public var rule: String
        package var transform: Transform
        public var values: Int
    }

    /// Concrete `table.field` → rule applied.
    public internal(set) var applied: [String: Applied] = [:]
    /// `table.field` → values dropped because no rule names the field.
    public internal(set) var droppedUnruled: [String: Int] = [:]
    /// `table.field` → values dropped because the rule's transform does not apply to the field.
    public internal(set) var droppedUnsupported: [String: Int] = [:]
    /// `table.field` → direct identifiers removed whatever the policy says.
    public internal(set) var directIdentifiersRemoved: [String: Int] = [:]
    /// Tokens scrubbing put in.
    public internal(set) var scrubTokens = ScrubCounts()
    /// What was not published because it is dated after the publication horizon (the export's
    /// creation minus the policy's `embargo_days`): `records` (whole records) and
    /// `consent.signed_at`, `participant.enrolled_on`, `participant.withdrawn_at` (values left
    /// empty).
    public internal(set) var leftOutAfterCreation: [String: Int] = [:]
    /// Records of exogenous kinds (a public series such as the weather) left out, by kind.
    public internal(set) var leftOutExogenous: [String: Int] = [:]
    /// Day totals on public holidays whose value was masked (`date_shift.holidays: mask`).
    public internal(set) var maskedHolidayValues = 0
    public internal(set) var participants = 0
    public internal(set) var consents = 0
    public internal(set) var records = 0

    package init() {}

    mutating func countApplied(_ field: String, rule: String, transform: Transform) {
        applied[field, default: Applied(rule: rule, transform: transform, values: 0)].values += 1
    }

    /// Adds `other`'s counts to these.
    public mutating func merge(_ other: DeidentificationStats) {
        for (field, entry) in other.applied {
            applied[field, default: Applied(rule: entry.rule, transform: entry.transform, values: 0)].values += entry.values
        }
        droppedUnruled.merge(other.droppedUnruled, uniquingKeysWith: +)
        droppedUnsupported.merge(other.droppedUnsupported, uniquingKeysWith: +)
        directIdentifiersRemoved.merge(other.directIdentifiersRemoved, uniquingKeysWith: +)
        scrubTokens.merge(other.scrubTokens)
        leftOutAfterCreation.merge(other.leftOutAfterCreation, uniquingKeysWith: +)
        leftOutExogenous.merge(other.leftOutExogenous, uniquingKeysWith: +)
        maskedHolidayValues += other.maskedHolidayValues
        participants += other.participants
        consents += other.consents
        records += other.records
    }
}
