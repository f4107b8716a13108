public import CohortCore
public import Foundation

/// One thread's reads of participants' records in a pass over many participants (the export's
/// k-anonymity profiles and its record workers): the ``StudyStore`` record reads, through what
/// ``StudyStore/withRecordReaders(_:_:)`` hands out. Use one reader on one thread at a time.
///
/// Each call is its own read transaction, as the store's own calls are: a participant's records
/// come from one committed state of the database.
public protocol StoreRecordReader: AnyObject, Sendable {
    /// True when the reader reads through a connection of its own: a caller may wait inside a
    /// read's `body` (hand rows to another thread and wait for room) without holding up the
    /// store or another reader. False for a reader that reads through the store's one
    /// connection, where waiting inside a read would stop everyone else's reads.
    var hasOwnConnection: Bool { get }
    /// ``StudyStore/forEachRecord(_:participantID:_:)``.
    func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws
    /// ``StudyStore/forEachRecordStartAndSource(_:participantID:_:)``.
    func forEachRecordStartAndSource(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws
}
