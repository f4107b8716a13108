package import CohortCore

/// The participants an import batch wrote, each with the latest record start it wrote for them,
/// so the store can check at commit that none of them withdrew while the file was importing.
///
/// The importer validates rows against the participants it read before the import's transaction
/// began; a withdrawal that commits in between (another coordinator, another terminal) would
/// otherwise let the file store records of an excluded or erased participant, or records dated
/// after a stop. Both stores check ``anyWithdrew(_:)`` against ``withdrawnParticipantsSQL``
/// inside the import's transaction, after the last row and before the audit event: on SQLite the write lock orders it after any withdrawal that
/// committed first; on PostgreSQL a withdrawal that has not committed yet waits for the import
/// (its `FOR UPDATE` against the `FOR KEY SHARE` locks the import holds on the participants it
/// wrote) and then removes what it wrote.
package struct ImportedParticipants: Sendable {
    /// Participant row key → the latest record start (epoch ms) written for them.
    package private(set) var latestStart: [Int64: Int64] = [:]
    private var lastKey: Int64 = .min
    private var lastStart: Int64 = .min

    package init() {}

    /// Notes a record of participant `key` starting at `startMs`.
    package mutating func note(_ key: Int64, startMs: Int64) {
        if key == lastKey {
            if startMs <= lastStart { return }
            lastStart = startMs
        } else {
            lastKey = key
            lastStart = max(startMs, latestStart[key] ?? .min)
        }
        latestStart[key] = lastStart
    }

    /// The participants who are not active or have a withdrawal time (few): row key, status,
    /// withdrawal instant. The same SQL on both stores.
    package static let withdrawnParticipantsSQL =
        "SELECT pk, status, withdrawn_at_ms FROM participants WHERE status <> 'active' OR withdrawn_at_ms IS NOT NULL"

    /// True when one of `withdrawn` (rows of ``withdrawnParticipantsSQL``) is a participant this
    /// batch wrote and is excluded or erased, or was stopped before a record the batch wrote.
    package func anyWithdrew(_ withdrawn: [(key: Int64, status: String, withdrawnAtMs: Int64?)]) -> Bool {
        for participant in withdrawn {
            guard let latest = latestStart[participant.key] else { continue }
            if participant.status == "excluded" || participant.status == "erased" { return true }
            if let at = participant.withdrawnAtMs, latest > at { return true }
        }
        return false
    }

    /// The error when a participant of the batch withdrew while it was importing.
    package static func withdrawnDuringImport(location: String) -> CohortError {
        CohortError(
            .conflict, "a participant in this file withdrew (or was excluded or erased) while the file was importing; nothing from the file was stored",
            at: .init(file: location),
            hint: "run the import again: the withdrawn participant's rows will then be refused (or written to --rejects) and the others stored")
    }
}
