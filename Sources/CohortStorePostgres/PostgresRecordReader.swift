public import CohortStore
import CohortCore
import CohortPostgres
import Foundation

extension PostgresStudyStore {
    /// Runs `body` with `count` readers, each on a connection of its own to the same database
    /// (as the same role, read-only, with the store's session settings), so the threads of a
    /// pass read at once and a reader may wait inside a read without holding up the store's own
    /// connection or another reader (``StoreRecordReader/hasOwnConnection``): the export's
    /// record workers stream a participant's rows in chunks instead of reading them whole. Each
    /// read is its own `REPEATABLE READ READ ONLY` transaction, as the store's reads are, and
    /// fetches ``readerFetchRows`` rows at a time. A connection closes when its reader is
    /// released: here, once `body` has returned or thrown (the export's workers have ended by then).
    public func withRecordReaders<T>(_ count: Int, _ body: ([any StoreRecordReader]) throws -> T) throws -> T {
        var readers: [PostgresRecordReader] = []
        defer { readers.removeAll() }  // each reader's connection closes as it goes
        for _ in 0..<max(1, count) { readers.append(try PostgresRecordReader(store: self)) }
        return try body(readers)
    }
}

/// One connection to a study database for one thread's record reads
/// (``PostgresStudyStore/withRecordReaders(_:_:)``); closed when the reader goes.
final class PostgresRecordReader: StoreRecordReader {
    private let store: PostgresStudyStore
    private let connection: SerializedConnection
    var hasOwnConnection: Bool { true }

    init(store: PostgresStudyStore) throws {
        self.store = store
        do {
            let conn = try PostgresStudyStore.session(url: store.url, options: store.options)
            try conn.query("SET default_transaction_read_only = on")
            connection = SerializedConnection(conn)
        } catch let error as CohortError {
            throw store.located(error)
        }
    }

    func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (Record) throws -> Void) throws {
        try store.forEachRecord(participant, participantID: participantID, on: connection, batch: PostgresStudyStore.readerFetchRows, body)
    }

    func forEachRecordStartAndSource(_ participant: ParticipantHandle, participantID: UUID, _ body: (Record) throws -> Void) throws {
        try store.forEachRecordStartAndSource(participant, participantID: participantID, on: connection, batch: PostgresStudyStore.readerFetchRows, body)
    }
}
