import CohortCore
import CohortCrypto
import CohortStore
import Foundation
import Testing

struct StudyStoreTests {
    static let identity = ParticipantIdentity(
        name: "Zelda Quintanilla-Okonkwo", email: "zelda.quintanilla@example.net", phone: "+1 555 0199 7788",
        birthDate: CivilDate(year: 1987, month: 4, day: 23), address: "742 Evergreen Terrace, Springfield", zip: "97403",
        mrn: "MRN-88231977", devices: ["Zelda's Apple Watch"])

    // MARK: Opening

    @Test func createdDatabaseIsPrivateToItsOwner() throws {
        try withStoreFixture { fixture in
            let store = try fixture.open(create: true)
            try store.appendEvent(actor: "test", action: "test.write", at: fixedDate)
            #expect(try permissions(fixture.url.path) == 0o600)
            let wal = fixture.url.path + "-wal"
            if FileManager.default.fileExists(atPath: wal) { #expect(try permissions(wal) & 0o077 == 0) }
        }
    }

    @Test func missingDatabaseIsNotFoundUnlessCreating() throws {
        try withStoreFixture { fixture in
            let error = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(error?.code == .notFound)
            #expect(!FileManager.default.fileExists(atPath: fixture.url.path))
        }
    }

    @Test func groupReadableDatabaseIsRefused() throws {
        try withStoreFixture { fixture in
            _ = try fixture.open(create: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: fixture.url.path)
            let error = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(error?.code == .security)
            #expect(error?.message.contains("group or others") == true)
            #expect(error?.hint?.contains("chmod 600") == true)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: fixture.url.path)
            #expect(throws: Never.self) { try fixture.open() }
        }
    }

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func databaseFromANewerCohortIsRefused() throws {
        try withStoreFixture { fixture in
            do { _ = try fixture.open(create: true) }
            #expect(try fixture.sqlite("SELECT identifier FROM grdb_migrations ORDER BY identifier") == "v1-foundation\nv2-private-text\nv3-sites\nv4-sharing-scopes\nv5-no-plaintext-note\nv6-records-by-key")
            try fixture.sqlite("INSERT INTO grdb_migrations (identifier) VALUES ('v99-future')")
            let error = #expect(throws: CohortError.self) { try fixture.open() }
            #expect(error?.code == .conflict)
            #expect(error?.message.contains("newer") == true)
            #expect(error?.hint?.contains("v6-records-by-key") == true)
        }
    }

    @Test(arguments: StoreKind.tested)
    func reopeningKeepsData(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            do {
                let store = try fixture.open(create: true)
                try store.enroll([try enrollment(code: "P-0001", identity: Self.identity)], actor: "coordinator", source: "test", at: fixedDate)
            }
            let store = try fixture.open()
            #expect(try store.participants().map(\.participant.code) == ["P-0001"])
            #expect(try store.counts()["audit_events"] == 1)
        }
    }

    // MARK: Identities

    @Test func identitiesAreEncryptedAtRest() throws {
        try withStoreFixture { fixture in
            let needles = [
                "Zelda", "Quintanilla", "zelda.quintanilla@example.net", "555 0199 7788", "1987-04-23", "Evergreen", "97403",
                "MRN-88231977", "Apple Watch",
            ]
            func assertNoPlaintext(_ label: String) throws {
                for suffix in ["", "-wal"] {
                    let path = fixture.url.path + suffix
                    guard let data = FileManager.default.contents(atPath: path) else { continue }
                    for needle in needles {
                        #expect(data.range(of: Data(needle.utf8)) == nil, "\(label): '\(needle)' is readable in study.db\(suffix)")
                    }
                }
            }
            do {
                let store = try fixture.open(create: true)
                try store.enroll([try enrollment(code: "P-0001", identity: Self.identity)], actor: "coordinator", source: "roster.csv", at: fixedDate)
                #expect(FileManager.default.contents(atPath: fixture.url.path + "-wal").map { !$0.isEmpty } == true)
                try assertNoPlaintext("while open")
                // The study code is not encrypted: the search can see what is stored in clear.
                let files = [fixture.url.path, fixture.url.path + "-wal"].compactMap { FileManager.default.contents(atPath: $0) }
                #expect(files.contains { $0.range(of: Data("P-0001".utf8)) != nil })
            }
            try assertNoPlaintext("after closing")
        }
    }

    @Test(arguments: StoreKind.tested)
    func identitiesDecryptOnlyWhenAsked(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let second = ParticipantIdentity(name: "Ann Other")
            let enrollments = [try enrollment(code: "P-0002", identity: second), try enrollment(code: "P-0001", identity: Self.identity)]
            try store.enroll(enrollments, actor: "coordinator", source: "roster.csv", at: fixedDate)
            let plain = try store.participants()
            #expect(plain.map(\.participant.code) == ["P-0001", "P-0002"])
            #expect(plain.allSatisfy { $0.participant.identity == nil })
            let decrypted = try store.participants(withIdentities: true)
            #expect(decrypted.map(\.participant.identity) == [Self.identity, second])
            #expect(decrypted.first?.participant.id == enrollments[1].participant.id)
            #expect(decrypted.first?.participant.timeZone == "Europe/Berlin")
            #expect(try store.participant(code: "P-0001", withIdentity: true)?.participant.identity == Self.identity)
            #expect(try store.participant(code: "P-0001")?.participant.identity == nil)
            #expect(try store.participant(code: "P-9999") == nil)
            let firstPK = try #require(decrypted.first?.handle)
            let token = try #require(try store.withdrawalTokenHash(firstPK))
            #expect(token.salt == enrollments[1].tokenSalt && token.hash == enrollments[1].tokenHash)
            // Audit events name the internal id, never an identifier.
            let events = try store.auditEvents()
            #expect(events.map(\.action) == ["participant.enroll", "participant.enroll"])
            #expect(events.last?.subject == enrollments[1].participant.id.uuidString.lowercased())
        }
    }

    /// The export reads the roster through a cursor (twice, and once more for the residual scan)
    /// instead of as a list: the cursor gives every participant the list gives, in the same
    /// order, identities opened only when asked, and an identity sealed for another participant
    /// fails the read as the list's does.
    @Test(arguments: StoreKind.tested)
    func theRosterCursorReadsWhatTheListReads(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let enrollments = try (0..<120).map { i in
                try enrollment(code: String(format: "P-%04d", 119 - i), identity: ParticipantIdentity(name: "Person \(i)", email: "p\(i)@example.org"))
            }
            try store.enroll(enrollments, actor: "coordinator", source: "roster.csv", at: fixedDate)
            for withIdentities in [false, true] {
                var streamed: [StoredParticipant] = []
                try store.forEachParticipant(withIdentities: withIdentities) { streamed.append($0) }
                let listed = try store.participants(withIdentities: withIdentities)
                #expect(streamed.count == 120)
                #expect(streamed == listed)
                #expect(streamed.map(\.participant.code) == streamed.map(\.participant.code).sorted())
                #expect(streamed.allSatisfy { ($0.participant.identity != nil) == withIdentities })
            }
            // The body's error ends the read and reaches the caller as it was thrown.
            var seen = 0
            let stop = #expect(throws: CohortError.self) {
                try store.forEachParticipant(withIdentities: true) { _ in
                    seen += 1
                    if seen == 3 { throw CohortError(.conflict, "stopped by the caller") }
                }
            }
            #expect(seen == 3)
            #expect(stop?.code == .conflict && stop?.message == "stopped by the caller")
            // A sealed name moved to another participant's row does not open there.
            let move = "UPDATE participants SET name_enc = (SELECT name_enc FROM participants WHERE code = 'P-0001') WHERE code = 'P-0002'"
            switch kind {
            case .sqlite: try fixture.sqlite(move)
            case .postgres: try fixture.postgres(move)
            }
            let failure = #expect(throws: CohortError.self) { try store.forEachParticipant(withIdentities: true) { _ in } }
            let listFailure = #expect(throws: CohortError.self) { try store.participants(withIdentities: true) }
            #expect(failure?.code == .security, "\(String(describing: failure))")
            #expect(failure?.description == listFailure?.description)
            #expect("\(String(describing: failure))".contains("Person") == false)
            var plain = 0
            try store.forEachParticipant(withIdentities: false) { _ in plain += 1 }
            #expect(plain == 120, "without identities nothing is opened")
        }
    }

    /// The export reads consents one participant at a time; each history is the one the
    /// all-participants query gives, in the same order (signing time, recording time, insertion).
    @Test(arguments: StoreKind.tested)
    func oneParticipantsConsentHistoryIsItsShareOfAllHistories(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let enrollments = [try enrollment(code: "P-0001", identity: Self.identity), try enrollment(code: "P-0002", identity: ParticipantIdentity(name: "Ann Other"))]
            try store.enroll(enrollments, actor: "coordinator", source: "test", at: fixedDate)
            let stored = try store.participants()
            // Signed out of order, and two with the same signing and recording instants.
            let instants: [(signed: Int64, recorded: Int64)] = [(3_000, 5_000), (1_000, 5_000), (2_000, 5_000), (2_000, 5_000), (1_000, 4_000)]
            for (n, instant) in instants.enumerated() {
                for participant in stored {
                    let consent = Consent(
                        id: UUID(), participantID: participant.participant.id, version: "1.\(n)", documentSHA256: String(repeating: "a", count: 64),
                        signedAt: Timestamp(epochMilliseconds: instant.signed), signatureKind: .typed, sharing: .studyOnly, status: .active,
                        recordedAt: Timestamp(epochMilliseconds: instant.recorded))
                    try store.recordConsent(consent, participant: participant.handle, signatureEvidence: nil, supersede: [], actor: "test", at: fixedDate)
                }
            }
            let all = try store.consentHistories()
            for participant in stored {
                let one = try store.consentHistory(participant.handle, participantID: participant.participant.id)
                #expect(one == all[participant.participant.id])
                #expect(one.map(\.version) == ["1.4", "1.1", "1.2", "1.3", "1.0"])
            }
        }
    }

    @Test(arguments: StoreKind.tested)
    func identitiesDoNotOpenWithAnotherKey(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            do {
                let store = try fixture.open(create: true)
                try store.enroll([try enrollment(code: "P-0001", identity: Self.identity)], actor: "coordinator", source: "test", at: fixedDate)
            }
            let other = try fixture.open(piiKey: try SecureRandom.bytes(32))
            #expect(try other.participants().count == 1)
            // Sealed identifiers fail to open: a security error, not another failure.
            #expect { try other.participants(withIdentities: true) } throws: { ($0 as? CohortError)?.code == .security }
        }
    }

    @Test(arguments: StoreKind.tested)
    func enrollmentIsAllOrNothing(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            try store.enroll([try enrollment(code: "P-0001", identity: Self.identity)], actor: "coordinator", source: "test", at: fixedDate)
            let error = #expect(throws: CohortError.self) {
                try store.enroll(
                    [try enrollment(code: "P-0002", identity: Self.identity), try enrollment(code: "P-0001", identity: Self.identity)],
                    actor: "coordinator", source: "test", at: fixedDate)
            }
            #expect(error?.code == .conflict)
            #expect(try store.participants().map(\.participant.code) == ["P-0001"])
            #expect(try store.counts()["audit_events"] == 1)
        }
    }

    // MARK: Import batches

    static func record(_ participant: Participant, _ kind: RecordKind, minute: Int64, value: Double, source: String? = "Apple Watch")
        -> CohortCore.Record
    {
        CohortCore.Record(
            participantID: participant.id, kind: kind,
            start: Timestamp(epochMilliseconds: 1_741_941_000_000 + minute * 60_000, utcOffsetSeconds: 3600), value: value, source: source)
    }

    /// Inserts `records`, counting inserted and duplicate rows as an importer does.
    static func importRecords(_ store: any StudyStore, _ records: [CohortCore.Record], pk: ParticipantHandle, file: String) throws -> ImportBatchResult {
        try store.importBatch(ImportBatchInfo(fileName: file, fileSHA256: String(repeating: "ab", count: 32), format: "csv"), actor: "coordinator", at: fixedDate) {
            inserter in
            var inserted = 0
            for record in records where try inserter.insert(record, participant: pk) { inserted += 1 }
            return (records.count, inserted, records.count - inserted, 0)
        }
    }

    @Test(arguments: StoreKind.tested)
    func failedImportStoresNothing(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let e = try enrollment(code: "P-0001", identity: Self.identity)
            try store.enroll([e], actor: "coordinator", source: "test", at: fixedDate)
            let pk = try #require(try store.participants().first?.handle)
            let before = try store.counts()
            let error = #expect(throws: CohortError.self) {
                try store.importBatch(ImportBatchInfo(fileName: "bad.csv", fileSHA256: String(repeating: "0", count: 64), format: "csv"),
                    actor: "coordinator", at: fixedDate) { inserter in
                    #expect(try inserter.insert(Self.record(e.participant, .heartRate, minute: 0, value: 61), participant: pk))
                    #expect(try inserter.insert(Self.record(e.participant, .heartRate, minute: 1, value: 62), participant: pk))
                    throw CohortError.invalid("value out of range", file: "bad.csv", line: 3, field: "value")
                }
            }
            #expect(error?.code == .invalidInput)
            #expect(error?.location?.line == 3)
            #expect(try store.recordCount() == 0)
            let after = try store.counts()
            #expect(after == before)
            #expect(after["import_batches"] == 0)
            #expect(try store.auditEvents().map(\.action) == ["participant.enroll"])
        }
    }

    @Test(arguments: StoreKind.tested)
    func duplicateRecordsAreIgnoredAndCounted(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let e = try enrollment(code: "P-0001", identity: Self.identity)
            try store.enroll([e], actor: "coordinator", source: "test", at: fixedDate)
            let pk = try #require(try store.participants().first?.handle)
            let p = e.participant
            let first = [
                Self.record(p, .heartRate, minute: 0, value: 61), Self.record(p, .heartRate, minute: 1, value: 62),
                Self.record(p, .heartRate, minute: 0, value: 99),  // same participant, kind, start and source: a duplicate
                Self.record(p, .heartRate, minute: 0, value: 61, source: "Fitbit Charge"),  // another source: kept
                Self.record(p, .restingHeartRate, minute: 0, value: 55),  // another kind: kept
                Self.record(p, .steps, minute: 5, value: 100, source: nil), Self.record(p, .steps, minute: 5, value: 100, source: ""),
            ]
            let result = try Self.importRecords(store, first, pk: pk, file: "first.csv")
            #expect(result.rowsTotal == 7)
            #expect(result.inserted == 5)
            #expect(result.duplicates == 2)
            #expect(try store.recordCount() == 5)
            #expect(try store.recordCount(pk) == 5)
            // The first value won; a duplicate never overwrites.
            var heartRates: [Double] = []
            try store.forEachRecord(pk, participantID: p.id) { record in
                if record.kind == .heartRate, record.source == "Apple Watch" { heartRates.append(record.value ?? -1) }
            }
            #expect(heartRates == [61, 62])
            // Importing the same file again stores nothing new, and says so.
            let again = try Self.importRecords(store, first, pk: pk, file: "first.csv")
            #expect(again.inserted == 0 && again.duplicates == 7)
            #expect(again.batchID != result.batchID)
            #expect(try store.recordCount() == 5)
            let imports = try store.auditEvents().filter { $0.action == "data.import" }
            #expect(imports.map { $0.details["duplicates"] } == ["2", "7"])
            #expect(imports.map { $0.details["inserted"] } == ["5", "0"])
            #expect(imports.first?.subject == "batch-\(result.batchID)")
            #expect(try store.counts()["import_batches"] == 2)
        }
    }

    @Test(arguments: StoreKind.tested)
    func recordsRoundTrip(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let e = try enrollment(code: "P-0001", identity: Self.identity)
            try store.enroll([e], actor: "coordinator", source: "test", at: fixedDate)
            let pk = try #require(try store.participants().first?.handle)
            let sleep = CohortCore.Record(
                participantID: e.participant.id, kind: .sleepDuration, start: Timestamp(epochMilliseconds: 1_741_900_000_000, utcOffsetSeconds: -18000),
                end: Timestamp(epochMilliseconds: 1_741_927_000_000, utcOffsetSeconds: -14400), value: 7.5, text: nil, source: "Garmin Venu",
                note: "woke up twice")
            let dose = CohortCore.Record(
                participantID: e.participant.id, kind: .medicationDose, start: Timestamp(epochMilliseconds: 1_741_950_000_000, utcOffsetSeconds: 3600),
                text: "ibuprofen")
            _ = try Self.importRecords(store, [dose, sleep], pk: pk, file: "app.json")
            var stored: [CohortCore.Record] = []
            try store.forEachRecord(pk, participantID: e.participant.id) { stored.append($0) }
            #expect(stored == [sleep, dose])
            var starts: [Timestamp] = []
            try store.forEachRecordStart { rowPK, _, start in
                #expect(rowPK == pk)
                starts.append(start)
            }
            #expect(Set(starts) == [sleep.start, dose.start])
        }
    }

    /// The export's read path reuses one statement per connection and the previous row's text
    /// and source when their bytes repeat: a value that changes and comes back, a read stopped
    /// by its caller, and another participant read in between all come back exactly as stored.
    @Test(arguments: StoreKind.tested)
    func recordsReadBackExactlyThroughRepeatedAndInterruptedReads(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let a = try enrollment(code: "P-0001", identity: Self.identity)
            let b = try enrollment(code: "P-0002", identity: ParticipantIdentity(name: "Other Person"))
            try store.enroll([a, b], actor: "coordinator", source: "test", at: fixedDate)
            let handles = try store.participants().map(\.handle)
            let texts: [String?] = ["ibuprofen", "ibuprofen", "naproxen", nil, "ibuprofen", "", "ibuprofène"]
            let sources: [String?] = ["Garmin Venu", "Garmin Venu", nil, "Garmin Venu", "Apple Watch", "Apple Watch", nil]
            func records(_ e: Enrollment, offset: Int32) -> [CohortCore.Record] {
                (0..<14).map { i in
                    CohortCore.Record(
                        participantID: e.participant.id, kind: i % 2 == 0 ? .medicationDose : .heartRate,
                        start: Timestamp(epochMilliseconds: 1_741_900_000_000 + Int64(i) * 60_000, utcOffsetSeconds: offset),
                        end: i % 3 == 0 ? Timestamp(epochMilliseconds: 1_741_900_000_000 + Int64(i) * 60_000 + 5_000, utcOffsetSeconds: offset + 3600) : nil,
                        value: i % 4 == 0 ? nil : (i % 4 == 1 ? 72 : 72.25 + Double(i)), text: texts[i % texts.count], source: sources[i % sources.count],
                        note: i == 5 ? "slept badly — Ümlaut" : nil)
                }
            }
            let mine = records(a, offset: -18_000), theirs = records(b, offset: 3600)
            _ = try Self.importRecords(store, mine, pk: handles[0], file: "a.json")
            _ = try Self.importRecords(store, theirs, pk: handles[1], file: "b.json")
            struct Stop: Error {}
            var first: [CohortCore.Record] = []
            // The body's error ends the read: SQLite wraps it as a read error, PostgreSQL passes it on.
            do {
                try store.forEachRecord(handles[0], participantID: a.participant.id) { record in
                    first.append(record)
                    if first.count == 3 { throw Stop() }
                }
                Issue.record("the body's error did not end the read")
            } catch is Stop {
                #expect(kind == .postgres)
            } catch let error as CohortError {
                #expect(kind == .sqlite && error.code == .system)
            }
            #expect(first == Array(mine.prefix(3)))
            var other: [CohortCore.Record] = [], again: [CohortCore.Record] = []
            try store.forEachRecord(handles[1], participantID: b.participant.id) { other.append($0) }
            try store.forEachRecord(handles[0], participantID: a.participant.id) { again.append($0) }
            #expect(other == theirs)
            #expect(again == mine)
        }
    }

    // MARK: Protocols

    @Test(arguments: StoreKind.tested)
    func protocolIsPinnedOnce(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let loaded = try ProtocolLoader.load(contentsOf: repositoryRoot.appendingPathComponent("protocols/minimal.yaml"))
            let template = Data("Consent text {{version}}".utf8)
            let path = "templates/consent/minimal-1.0.mustache"
            let pinned = try store.pinProtocol(loaded, templates: [path: template], actor: "coordinator", at: fixedDate)
            #expect(pinned.sha256 == SHA256.hex(try loaded.canonicalJSON()))
            #expect(try store.currentProtocol()?.studyProtocol == loaded.studyProtocol)
            #expect(try store.currentProtocol()?.sha256 == pinned.sha256)
            #expect(try store.template(path: path, protocolSHA256: pinned.sha256) == template)
            // The same content again changes nothing.
            _ = try store.pinProtocol(loaded, templates: [path: template], actor: "coordinator", at: fixedDate)
            #expect(try store.auditEvents().map(\.action) == ["protocol.load"])
            #expect(try store.auditEvents().first?.details["sha256"] == pinned.sha256)
            // Other content under the same revision is refused; so is another study.
            var changed = loaded
            changed.studyProtocol.durationDays += 1
            #expect(throws: CohortError.self) { try store.pinProtocol(changed, templates: [:], actor: "coordinator", at: fixedDate) }
            var amendment = changed
            amendment.studyProtocol.revision = 2
            _ = try store.pinProtocol(amendment, templates: [:], actor: "coordinator", at: fixedDate)
            #expect(try store.currentProtocol()?.studyProtocol.revision == 2)
            let older = #expect(throws: CohortError.self) { try store.pinProtocol(loaded, templates: [:], actor: "coordinator", at: fixedDate) }
            #expect(older?.code == .conflict)
            var otherStudy = amendment
            otherStudy.studyProtocol.id = "another-study"
            otherStudy.studyProtocol.revision = 3
            let error = #expect(throws: CohortError.self) { try store.pinProtocol(otherStudy, templates: [:], actor: "coordinator", at: fixedDate) }
            #expect(error?.code == .conflict)
        }
    }
}
