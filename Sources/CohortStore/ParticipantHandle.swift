/// A participant as the store knows them, for passing back to the store: opaque outside it.
///
/// The store's row keys (`participants.pk`) never leave its API (they change meaning on a rebuilt
/// or merged database); callers get a handle from ``StudyStore/participants(withIdentities:)`` or
/// ``StudyStore/participant(code:withIdentity:)`` and hand it to the calls that act on that
/// participant's rows. It is valid for the store it came from.
public struct ParticipantHandle: Sendable, Hashable {
    /// The `participants.pk` of the row (either store's; for the stores only).
    package let rowKey: Int64

    /// A handle for row key `rowKey` (for the stores only).
    package init(rowKey: Int64) {
        self.rowKey = rowKey
    }
}
