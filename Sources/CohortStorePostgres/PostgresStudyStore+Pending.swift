// SKELETON: every method here is to be replaced by a real implementation in its own file
// (PostgresStudyStore+Audit.swift, +Participants, +Consents, +Protocols, +Exports: the "core"
// engineer; PostgresStudyStore+Records.swift and PostgresRecordSink.swift: the "records"
// engineer). This file must be empty (deleted) before the branch is merged into main.
public import CohortCore
public import CohortStore
public import Foundation

extension PostgresStudyStore {
    static func notBuilt(_ name: String) -> CohortError {
        CohortError(.system, "\(name) is not built on PostgreSQL yet")
    }

    // records engineer
    public func importBatch(
        _ info: ImportBatchInfo, actor: String, at: Date,
        body: (any RecordSink) throws -> (total: Int, inserted: Int, duplicates: Int, rejected: Int)
    ) throws -> ImportBatchResult { throw Self.notBuilt(#function) }
    public func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        throw Self.notBuilt(#function)
    }
    public func forEachRecordStart(_ body: (ParticipantHandle, RecordKind, Timestamp) throws -> Void) throws { throw Self.notBuilt(#function) }
    public func recordCount(_ participant: ParticipantHandle?) throws -> Int { throw Self.notBuilt(#function) }
    public func counts() throws -> [String: Int] { throw Self.notBuilt(#function) }
}
