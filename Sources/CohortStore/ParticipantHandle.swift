/// A participant as the store knows them, for passing back to the store: opaque outside it.
///
/// The store's row keys are SQLite's and never leave its API (they change meaning on a rebuilt
/// or merged database); callers get a handle from ``StudyStore/participants(withIdentities:)`` or
/// ``StudyStore/participant(code:withIdentity:)`` and hand it to the calls that act on that
/// participant's rows. It is valid for the store it came from.
public struct ParticipantHandle: Sendable, Hashable {
    /// The `participants.pk` of the row (`package`: the PostgreSQL store, in its own module, needs it).
    package let rowKey: Int64

    package init(rowKey: Int64) {
        self.rowKey = rowKey
    }
}
