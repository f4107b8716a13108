public import CohortCore
public import Foundation

/// What recording a valid consent does to the history: one new row, earlier rows superseded.
/// History is never overwritten.
public struct ConsentChange: Sendable, Hashable {
    /// The row to insert (status `active`).
    public var consent: Consent
    /// Ids of the rows to mark `superseded` (every row that was `active`).
    public var supersededIDs: [UUID]
    /// Whether the new consent is itself due for re-consent (an older version than the
    /// protocol's current one was signed, and the policy requires re-consent): data imports stay
    /// refused until the current version is signed.
    public var reconsentDue: Bool

    /// Creates a change.
    package init(consent: Consent, supersededIDs: [UUID], reconsentDue: Bool) {
        self.consent = consent
        self.supersededIDs = supersededIDs
        self.reconsentDue = reconsentDue
    }
}
