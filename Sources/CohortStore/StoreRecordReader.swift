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

extension StudyStore {
    /// `count` readers that read through this store itself (its calls are serialized by the
    /// store: one connection under one lock), for a store that has no readers of its own.
    public func withRecordReaders<T>(_ count: Int, _ body: ([any StoreRecordReader]) throws -> T) throws -> T {
        let reader = StoreReadingThroughStore(store: self)
        return try body(Array(repeating: reader, count: max(1, count)))
    }
}

/// A reader that reads through the store's own calls.
final class StoreReadingThroughStore: StoreRecordReader {
    let store: any StudyStore
    var hasOwnConnection: Bool { false }

    init(store: any StudyStore) {
        self.store = store
    }

    func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        try store.forEachRecord(participant, participantID: participantID, body)
    }

    func forEachRecordStartAndSource(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        try store.forEachRecordStartAndSource(participant, participantID: participantID, body)
    }
}
