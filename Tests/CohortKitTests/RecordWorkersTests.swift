import CohortCore
import CohortDeid
import CohortStore
import Foundation
import Synchronization
import Testing

@testable import CohortKit

/// The export's record workers hand a participant's records to the write stage in chunks, and
/// — reading through a connection of their own — read no further ahead than the chunks they may
/// queue, however many records the participant has: the export's memory does not grow with a
/// participant's records (bench size XL-dense). The replayed sequence is the same for every
/// chunk size and for both ways of reading.
struct RecordWorkersTests {
    /// Synthetic records per participant, counting how many it has handed out.
    final class CountingReader: StoreRecordReader {
        let hasOwnConnection: Bool
        let records: [ParticipantHandle: [Record]]
        let handedOut = Atomic<Int>(0)

        init(hasOwnConnection: Bool, records: [ParticipantHandle: [Record]]) {
            self.hasOwnConnection = hasOwnConnection
            self.records = records
        }

        func forEachRecord(_ participant: ParticipantHandle, participantID: UUID, _ body: (Record) throws -> Void) throws {
            for record in records[participant] ?? [] {
                handedOut.add(1, ordering: .sequentiallyConsistent)
                try body(record)
            }
        }

        func forEachRecordStartAndSource(_ participant: ParticipantHandle, participantID: UUID, _ body: (Record) throws -> Void) throws {
            try forEachRecord(participant, participantID: participantID) { try body(Deidentifier.startAndSourceFields(of: $0)) }
        }
    }

    struct Replay {
        /// (record start, published start, published value) of every outcome, in replay order.
        var rows: [[Int64?]] = []
        /// The most records the reader had handed out beyond those replayed.
        var maxLead = 0
        /// Chunk buffers the worker allocated (``ChunkPool/chunksMade``).
        var chunksMade = 0
    }

    static let dense = 5_000
    static let reference = CivilDate(year: 2026, month: 4, day: 20) ?? CivilDate(daysSinceEpoch: 0)

    /// Runs one worker over `participants` with `reader` and replays everything.
    static func replay(
        _ participants: [StoredParticipant], reader: CountingReader, deid: Deidentifier, chunkSize: Int
    ) throws -> Replay {
        let workers = RecordWorkers(readers: [reader], included: participants, coverage: [:], leftOutKinds: [:], deid: deid, chunkSize: chunkSize)
        defer { workers.cancel() }
        var replay = Replay()
        var replayed = 0
        for index in participants.indices {
            try workers.forEachOutcome(of: index) { outcome in
                replayed += 1
                replay.maxLead = max(replay.maxLead, reader.handedOut.load(ordering: .sequentiallyConsistent) - replayed)
                guard case .covered(let record, let row) = outcome else { return replay.rows.append([]) }
                replay.rows.append([record.start.epochMilliseconds, row?.start?.epochMilliseconds, row?.value.map { Int64($0) }])
            }
        }
        _ = try workers.finish()
        replay.chunksMade = workers.pools[0].chunksMade
        return replay
    }

    @Test func aDenseParticipantIsStreamedInChunksNotHeldWhole() throws {
        let cohort = try TimeZoneCohort(participants: 2)
        defer { cohort.cleanup() }
        let participants: [StoredParticipant] = try cohort.workspace.participants(site: nil)
        let pinned = try cohort.workspace.currentProtocol()
        let deid = try Deidentifier(
            studyProtocol: pinned.studyProtocol, recipient: "analyst", recipientKey: Array(0..<32), shiftKey: Array(32..<64),
            roster: participants.map { $0.participant }, referenceDate: Self.reference)
        // The first participant: a heart-rate sample a minute; the second: three.
        let start: Int64 = 1_771_632_000_000  // 2026-02-21T00:00:00Z
        var records: [ParticipantHandle: [Record]] = [:]
        for (n, stored) in participants.enumerated() {
            let count = n == 0 ? Self.dense : 3
            var list: [Record] = []
            for i in 0..<count {
                let at = Timestamp(epochMilliseconds: start + Int64(i) * 60_000)
                list.append(Record(participantID: stored.participant.id, kind: RecordKind.heartRate, start: at, value: Double(60 + i % 40)))
            }
            records[stored.handle] = list
        }
        let chunk = 16
        let streamed = try Self.replay(participants, reader: CountingReader(hasOwnConnection: true, records: records), deid: deid, chunkSize: chunk)
        // Ahead of the write stage: the chunk it replays, the queued ones, and one waiting to be queued.
        #expect(streamed.maxLead <= chunk * (RecordWorkers.queuedChunks + 2), "read \(streamed.maxLead) records ahead")
        #expect(streamed.rows.count == Self.dense + 3)
        // Chunk buffers are reused: one being filled, one waiting for a place, the queued ones
        // and the one being replayed — however many chunks the participants' records make.
        #expect(streamed.chunksMade <= RecordWorkers.queuedChunks + 3, "\(streamed.chunksMade) chunk buffers for \((Self.dense + 3) / chunk) chunks")
        // Reading through the store's one connection reads a participant whole first: the same
        // measure sees it (so the bound above is not met by accident).
        let whole = try Self.replay(participants, reader: CountingReader(hasOwnConnection: false, records: records), deid: deid, chunkSize: chunk)
        #expect(whole.maxLead >= Self.dense - chunk * (RecordWorkers.queuedChunks + 2))
        #expect(whole.rows == streamed.rows)
        for size in [1, 7, RecordWorkers.chunkSize] {
            let other = try Self.replay(participants, reader: CountingReader(hasOwnConnection: true, records: records), deid: deid, chunkSize: size)
            #expect(other.rows == streamed.rows, "chunks of \(size)")
            #expect(other.chunksMade <= RecordWorkers.queuedChunks + 3, "chunks of \(size)")
        }
        // Every record is covered (no consent given here leaves one out); which are published is
        // the de-identifier's business (it thins a per-minute series), and the rows compared
        // above carry it either way.
        #expect(streamed.rows.allSatisfy { $0.count == 3 })
    }
}
