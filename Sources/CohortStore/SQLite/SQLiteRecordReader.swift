import CohortCore
import Foundation
import GRDB

extension SQLiteStudyStore {
    /// The page cache of each reader connection, in KiB (SQLite's default is 2,000): a reader
    /// streams one participant's rows at a time, so a small cache costs little and keeps the
    /// export's peak memory where one connection had it.
    static let readerCacheKiB = 256

    /// Runs `body` with `count` readers, each on its own read-only connection to `study.db`, so
    /// the threads of a pass read at once (the write-ahead log lets readers run beside each
    /// other and beside a writer; each read is its own transaction, as ``forEachRecord(_:participantID:_:)``
    /// is on the store's connection). The connections are closed when `body` returns or throws.
    public func withRecordReaders<T>(_ count: Int, _ body: ([any StoreRecordReader]) throws -> T) throws -> T {
        var readers: [SQLiteRecordReader] = []
        defer { for reader in readers { reader.close() } }
        for _ in 0..<max(1, count) { readers.append(try SQLiteRecordReader(store: self)) }
        return try body(readers)
    }
}

/// One read-only connection to a study database, for one thread's record reads
/// (``SQLiteStudyStore/withRecordReaders(_:_:)``).
final class SQLiteRecordReader: StoreRecordReader {
    private let store: SQLiteStudyStore
    private let queue: DatabaseQueue
    var hasOwnConnection: Bool { true }

    init(store: SQLiteStudyStore) throws {
        self.store = store
        var config = Configuration()
        config.readonly = true
        config.label = "cohort-reader"
        config.busyMode = .callback(SQLiteStudyStore.busyCallback(timeout: store.lockTimeout, onWaiting: nil))
        let cacheKiB = SQLiteStudyStore.readerCacheKiB
        config.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)") }
        let path = store.url.path
        do {
            queue = try DatabaseQueue(path: SQLiteStudyStore.openPath(path, readOnly: true), configuration: config)
        } catch {
            throw SQLiteStudyStore.openError(error, path: path, lockTimeout: store.lockTimeout)
        }
    }

    func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        let piiKey = store.piiKey
        try store.read(on: queue) { db in try SQLiteStudyStore.forEachRecord(db, participant, participantID: participantID, piiKey: piiKey, body) }
    }

    func forEachRecordStartAndSource(_ participant: ParticipantHandle, participantID: UUID, _ body: (CohortCore.Record) throws -> Void) throws {
        try store.read(on: queue) { db in try SQLiteStudyStore.forEachRecordStartAndSource(db, participant, participantID: participantID, body) }
    }

    /// Closes the connection (a reader is not used after ``SQLiteStudyStore/withRecordReaders(_:_:)``
    /// returns; closing twice is harmless).
    func close() {
        try? queue.close()
    }
}
