import CohortCore
import CohortStore
import Foundation
import Synchronization
import Testing

/// The export's record reads: the slim read of the k-anonymity pass
/// (`forEachRecordStartAndSource`) and the per-thread readers (`withRecordReaders`).
struct StoreRecordReaderTests {
    /// Two participants' records with values, texts, notes, ends, several UTC offsets and
    /// sources (some none, some repeated, one non-ASCII), imported into `store`.
    static func seed(_ store: any StudyStore) throws -> [(handle: ParticipantHandle, id: UUID, records: [CohortCore.Record])] {
        let a = try enrollment(code: "P-0001", identity: StudyStoreTests.identity)
        let b = try enrollment(code: "P-0002", identity: ParticipantIdentity(name: "Other Person"))
        try store.enroll([a, b], actor: "coordinator", source: "test", at: fixedDate)
        let handles = try store.participants().map(\.handle)
        let texts: [String?] = ["ibuprofen", nil, "naproxen", "", "ibuprofène"]
        let sources: [String?] = ["Garmin Venu", "Garmin Venu", nil, "Apple Watch", "Fitbit — Ümlaut", ""]
        let offsets: [Int32] = [-18_000, 3600, 19_800, -12_600]
        func records(_ e: Enrollment, shift: Int) -> [CohortCore.Record] {
            (0..<40).map { i in
                let kinds: [RecordKind] = [.medicationDose, .heartRate, .sleepDuration, .steps]
                let offset = offsets[(i + shift) % offsets.count]
                let startMs = 1_741_900_000_000 + Int64(i / 3) * 3_600_000 + Int64(i % 3) * 60_000
                return CohortCore.Record(
                    participantID: e.participant.id, kind: kinds[(i + shift) % kinds.count],
                    start: Timestamp(epochMilliseconds: startMs, utcOffsetSeconds: offset),
                    end: i % 3 == 0 ? Timestamp(epochMilliseconds: startMs + 28_800_000, utcOffsetSeconds: offsets[(i + 1) % offsets.count]) : nil,
                    value: i % 4 == 0 ? nil : 60.5 + Double(i), text: texts[i % texts.count], source: sources[i % sources.count],
                    note: i % 5 == 2 ? "woke up twice \(i)" : nil)
            }
        }
        let mine = records(a, shift: 0), theirs = records(b, shift: 1)
        _ = try StudyStoreTests.importRecords(store, mine, pk: handles[0], file: "a.json")
        _ = try StudyStoreTests.importRecords(store, theirs, pk: handles[1], file: "b.json")
        // An empty source is stored as none.
        func asStored(_ records: [CohortCore.Record]) -> [CohortCore.Record] {
            records.map { r in
                var r = r
                if r.source?.isEmpty == true { r.source = nil }
                return r
            }
        }
        return [(handles[0], a.participant.id, asStored(mine)), (handles[1], b.participant.id, asStored(theirs))]
    }

    /// What the k-anonymity pass keeps of a record, written here independently of the store:
    /// participant, kind, start, end and source.
    static func startAndSource(_ r: CohortCore.Record) -> CohortCore.Record {
        CohortCore.Record(participantID: r.participantID, kind: r.kind, start: r.start, end: r.end, source: r.source)
    }

    /// `records` kind by kind (byte order), each kind by start then source.
    static func byKind(_ records: [CohortCore.Record]) -> [CohortCore.Record] {
        records.sorted { a, b in
            let (kindA, kindB) = (Array(a.kind.rawValue.utf8), Array(b.kind.rawValue.utf8))
            if kindA != kindB { return kindA.lexicographicallyPrecedes(kindB) }
            if a.start.epochMilliseconds != b.start.epochMilliseconds { return a.start.epochMilliseconds < b.start.epochMilliseconds }
            return Array((a.source ?? "").utf8).lexicographicallyPrecedes(Array((b.source ?? "").utf8))
        }
    }

    /// The slim read gives, record for record, the full read's records less their value, text
    /// and note, kind by kind — through the store and through each reader.
    @Test(arguments: StoreKind.tested)
    func theSlimReadIsTheFullReadLessValueTextAndNote(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            for participant in try Self.seed(store) {
                var full: [CohortCore.Record] = [], slim: [CohortCore.Record] = []
                try store.forEachRecord(participant.handle, participantID: participant.id) { full.append($0) }
                try store.forEachRecordStartAndSource(participant.handle, participantID: participant.id) { slim.append($0) }
                #expect(full.count == participant.records.count)
                #expect(Set(full) == Set(participant.records), "the full read returns what was stored")
                #expect(full.contains { $0.note != nil } && full.contains { $0.text != nil } && full.contains { $0.value != nil })
                #expect(slim == Self.byKind(full.map(Self.startAndSource)), "the full read's records, kind by kind in start then source order")
                #expect(slim.allSatisfy { $0.value == nil && $0.text == nil && $0.note == nil })
                try store.withRecordReaders(2) { readers in
                    #expect(readers.count == 2)
                    for reader in readers {
                        var viaFull: [CohortCore.Record] = [], viaSlim: [CohortCore.Record] = []
                        try reader.forEachRecord(participant.handle, participantID: participant.id) { viaFull.append($0) }
                        try reader.forEachRecordStartAndSource(participant.handle, participantID: participant.id) { viaSlim.append($0) }
                        #expect(viaFull == full)
                        #expect(viaSlim == slim)
                    }
                }
            }
        }
    }

    /// Readers on two threads at once read what one reads alone, and each read sees what was
    /// committed before it began (a reader opened earlier included: each read is its own
    /// transaction).
    @Test(arguments: StoreKind.tested)
    func readersReadAtOnceAndSeeWhatWasCommittedBeforeEachRead(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let seeded = try Self.seed(store)
            try store.withRecordReaders(2) { readers in
                let results = Mutex<[Int: [CohortCore.Record]]>([:])
                DispatchQueue.concurrentPerform(iterations: 2) { worker in
                    var read: [CohortCore.Record] = []
                    for _ in 0..<20 {
                        read.removeAll()
                        let p = seeded[worker]
                        try? readers[worker].forEachRecord(p.handle, participantID: p.id) { read.append($0) }
                    }
                    results.withLock { $0[worker] = read }
                }
                for worker in 0..<2 {
                    #expect(Set(results.withLock { $0[worker] } ?? []) == Set(seeded[worker].records))
                }
                let later = CohortCore.Record(
                    participantID: seeded[0].id, kind: .heartRate, start: Timestamp(epochMilliseconds: 1_800_000_000_000, utcOffsetSeconds: 0), value: 70,
                    source: "Later Device")
                _ = try StudyStoreTests.importRecords(store, [later], pk: seeded[0].handle, file: "later.json")
                var after: [CohortCore.Record] = []
                try readers[1].forEachRecordStartAndSource(seeded[0].handle, participantID: seeded[0].id) { after.append($0) }
                #expect(after.contains(Self.startAndSource(later)))
                #expect(after.count == seeded[0].records.count + 1)
            }
        }
    }

    /// What the export's record workers rely on to stream a participant in chunks: each reader
    /// has a connection of its own, so while one waits inside a read (as a worker does while its
    /// queue is full) the store and another reader still read. Reading through the store's one
    /// connection this would hang; the wait is bounded, so the test fails instead.
    @Test(arguments: StoreKind.tested)
    func aReaderMayWaitInsideAReadWhileOthersRead(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let seeded = try Self.seed(store)
            try store.withRecordReaders(2) { readers in
                let own = readers.allSatisfy { $0.hasOwnConnection }
                #expect(own)
                let othersDone = DispatchSemaphore(value: 0)
                let counts = Mutex<[Int]>([])
                DispatchQueue.global().async {
                    // Inside reader 0's read of participant 0, reader 1 and the store read participant 1.
                    var n = 0
                    try? readers[1].forEachRecord(seeded[1].handle, participantID: seeded[1].id) { _ in n += 1 }
                    let viaStore = (try? store.recordCount(seeded[1].handle)) ?? -1
                    counts.withLock { $0 = [n, viaStore] }
                    othersDone.signal()
                }
                var waited = false
                var timedOut = false
                try readers[0].forEachRecord(seeded[0].handle, participantID: seeded[0].id) { _ in
                    guard !waited else { return }
                    waited = true
                    timedOut = othersDone.wait(timeout: .now() + 20) == .timedOut
                }
                #expect(waited && !timedOut, "the other reads finished while reader 0 waited inside its read")
                if timedOut { othersDone.wait() }  // let the other thread end before the readers close
                let read = counts.withLock { $0 }
                #expect(read == [seeded[1].records.count, seeded[1].records.count])
            }
        }
    }

    /// SQLite's readers are connections of their own, closed when `withRecordReaders` returns
    /// or throws. (SQLite keeps a closed connection's descriptor while another connection of the
    /// process holds locks on the file, and reuses it at the next open, so the count is checked
    /// over many rounds: a reader left open would add three descriptors a round.)
    @Test func sqliteReadersAreClosedOnEveryPath() throws {
        try withStoreFixture(.sqlite) { fixture in
            let store = try fixture.open(create: true)
            let seeded = try Self.seed(store)
            let path = fixture.url.path
            let before = Self.openDescriptors(of: path)
            #expect(before >= 1, "the store's own connection holds study.db open")
            struct Stop: Error {}
            for round in 0..<20 {
                try store.withRecordReaders(3) { readers in
                    for reader in readers { try reader.forEachRecord(seeded[0].handle, participantID: seeded[0].id) { _ in } }
                    #expect(Self.openDescriptors(of: path) >= before + 3, "three readers, three connections")
                }
                #expect(throws: (any Error).self, "round \(round): the body's error ends the pass") {
                    try store.withRecordReaders(3) { readers in
                        try readers[0].forEachRecordStartAndSource(seeded[1].handle, participantID: seeded[1].id) { _ in throw Stop() }
                    }
                }
            }
            #expect(Self.openDescriptors(of: path) <= before + 3)
        }
    }

    /// How many of this process's file descriptors are open on `path`.
    static func openDescriptors(of path: String) -> Int {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == target }.count
    }
}

/// SQLite's full read merges a participant's kinds by start without a sort (one statement per
/// kind): it must give what `ORDER BY start_ms, kind, source` gives, ties included.
struct SQLiteFullReadOrderTests {
    /// Records at one instant in several kinds, one kind at one instant from several sources, a
    /// kind with one record, kinds whose starts interleave, and a participant with none.
    @Test func theFullReadIsByStartThenKindThenSourceTiesIncluded() throws {
        try withStoreFixture(.sqlite) { fixture in
            let store = try fixture.open(create: true)
            let a = try enrollment(code: "P-0001", identity: StudyStoreTests.identity)
            let b = try enrollment(code: "P-0002", identity: ParticipantIdentity(name: "Other Person"))
            try store.enroll([a, b], actor: "coordinator", source: "test", at: fixedDate)
            let handles = try store.participants().map(\.handle)
            let kinds: [RecordKind] = [.steps, .heartRate, .pain, .sleepDuration, .medicationDose, .flare]
            let sources: [String?] = ["Zeta Band", "Alpha Watch", nil, "Émile's phone", "alpha watch"]
            var records: [CohortCore.Record] = []
            var generator = SeededRandom(seed: 28)
            for i in 0..<400 {
                let kind = kinds[Int(generator.next() % UInt64(i < 380 ? kinds.count - 1 : kinds.count))]
                let startMs = 1_741_900_000_000 + Int64(generator.next() % 40) * 60_000
                let source = sources[Int(generator.next() % UInt64(sources.count))]
                records.append(
                    CohortCore.Record(
                        participantID: a.participant.id, kind: kind, start: Timestamp(epochMilliseconds: startMs, utcOffsetSeconds: 3600), value: Double(i),
                        source: source))
            }
            // One record per (kind, start, source): the store keeps the first of duplicates.
            var seen = Set<String>()
            records = records.filter { seen.insert("\($0.kind.rawValue)|\($0.start.epochMilliseconds)|\($0.source ?? "")").inserted }
            _ = try StudyStoreTests.importRecords(store, records.shuffled(using: &generator), pk: handles[0], file: "a.json")
            let expected = records.sorted { x, y in
                if x.start.epochMilliseconds != y.start.epochMilliseconds { return x.start.epochMilliseconds < y.start.epochMilliseconds }
                let (kindX, kindY) = (Array(x.kind.rawValue.utf8), Array(y.kind.rawValue.utf8))
                if kindX != kindY { return kindX.lexicographicallyPrecedes(kindY) }
                return Array((x.source ?? "").utf8).lexicographicallyPrecedes(Array((y.source ?? "").utf8))
            }
            let starts = Dictionary(grouping: expected) { $0.start.epochMilliseconds }
            #expect(starts.values.contains { group in Set(group.map(\.kind)).count > 2 }, "several kinds at one instant")
            #expect(starts.values.contains { group in group.filter { $0.kind == .heartRate }.count > 2 }, "one kind at one instant from several sources")
            var viaStore: [CohortCore.Record] = []
            try store.forEachRecord(handles[0], participantID: a.participant.id) { viaStore.append($0) }
            #expect(viaStore == expected)
            try store.withRecordReaders(2) { readers in
                for reader in readers {
                    var read: [CohortCore.Record] = []
                    try reader.forEachRecord(handles[0], participantID: a.participant.id) { read.append($0) }
                    #expect(read == expected)
                    var none = 0
                    try reader.forEachRecord(handles[1], participantID: b.participant.id) { _ in none += 1 }
                    #expect(none == 0)
                }
            }
        }
    }
}
