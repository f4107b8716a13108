import CohortCore
import CohortCrypto
import CohortStore
import Foundation
import Testing

struct StudyStoreAuditTests {
    /// Writes `events` audit events, signing a checkpoint after each seq in `checkpoints`, and
    /// closes the database; returns the events as written.
    @discardableResult
    static func makeChain(_ fixture: StoreFixture, events: Int, checkpoints: Set<Int>) throws -> [AuditEvent] {
        let store = try fixture.open(create: true)
        for i in 1...events {
            let at = fixedDate.addingTimeInterval(Double(i) * 60.5)
            try store.appendEvent(actor: "coordinator", action: "test.step", subject: "subject-\(i)", details: ["step": String(i), "rows": "\(i * 10)"], at: at)
            if checkpoints.contains(i) { try store.checkpoint(signingKey: fixture.signingKey, at: at) }
        }
        return try store.auditEvents()
    }

    static func verify(_ fixture: StoreFixture) throws -> AuditVerification {
        try fixture.open().verifyAudit(publicKey: fixture.signingKey.publicKey)
    }

    @Test(arguments: StoreKind.tested)
    func appendedEventsFormAnIntactSignedChain(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let events = try Self.makeChain(fixture, events: 25, checkpoints: [10, 25])
            #expect(events.map(\.seq) == Array(1...25))
            #expect(events.first?.prevHash == AuditEvent.genesisHash)
            for (previous, event) in zip(events, events.dropFirst()) { #expect(event.prevHash == previous.hash) }
            // The hash is what the documentation says, so an auditor can recompute it.
            for event in events {
                let input = try AuditEvent.hashInput(
                    seq: event.seq, at: event.at, actor: event.actor, action: event.action, subject: event.subject, details: event.details,
                    prevHash: event.prevHash)
                #expect(SHA256.hex(input) == event.hash)
            }
            #expect(events.first?.at == "2025-03-14T08:31:00.500Z")
            let verification = try Self.verify(fixture)
            #expect(verification.isIntact, "\(verification.firstProblem ?? "")")
            #expect(verification.events == 25)
            #expect(verification.checkpoints == 2)
            #expect(verification.headSeq == 25)
            #expect(verification.headHash == events.last?.hash)
            #expect(verification.brokenAtSeq == nil)
            let store = try fixture.open()
            let checkpoint = try #require(try store.latestCheckpoint())
            #expect(checkpoint.seq == 25)
            #expect(checkpoint.headHash == events.last?.hash)
            let signature = try #require(Base64.decode(checkpoint.signature))
            #expect(fixture.signingKey.publicKey.isValidSignature(signature, for: checkpoint.signedBytes))
            // Signing again without new events returns the same checkpoint.
            #expect(try store.checkpoint(signingKey: fixture.signingKey, at: fixedDate) == checkpoint)
            #expect(try store.auditEvents(since: 24).map(\.seq) == [24, 25])
            #expect(try store.auditEvents(since: 3, limit: 2).map(\.seq) == [3, 4])
        }
    }

    @Test(arguments: StoreKind.tested)
    func emptyChainIsIntactAndHasNoCheckpoint(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            #expect(try store.checkpoint(signingKey: fixture.signingKey, at: fixedDate) == nil)
            #expect(try store.latestCheckpoint() == nil)
            let verification = try store.verifyAudit(publicKey: fixture.signingKey.publicKey)
            #expect(verification.isIntact)
            #expect(verification.events == 0)
            #expect(verification.headHash == AuditEvent.genesisHash)
        }
    }

    @Test(arguments: StoreKind.tested)
    func checkpointsSignedByAnotherKeyDoNotVerify(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            try Self.makeChain(fixture, events: 12, checkpoints: [10])
            let verification = try fixture.open().verifyAudit(publicKey: try Ed25519PrivateKey.generate().publicKey)
            #expect(verification.firstProblem?.contains("checkpoint at event 10: its signature does not verify") == true)
            #expect(verification.brokenAtSeq == 10)
        }
    }

    /// Edits made with the stock sqlite3 tool on the closed database, and the event each must be
    /// caught at. The chain has events 1…10 with signed checkpoints at 5 and 10.
    static let tamperings: [(name: String, sql: String, seq: Int64, problem: String)] = [
        ("edit details", #"UPDATE audit_events SET details = '{"rows":"9999","step":"4"}' WHERE seq = 4"#, 4,
            "event 4: its content does not match its hash"),
        ("edit actor", "UPDATE audit_events SET actor = 'someone-else' WHERE seq = 7", 7, "event 7: its content does not match its hash"),
        ("edit time", "UPDATE audit_events SET at = '2020-01-01T00:00:00Z' WHERE seq = 1", 1, "event 1: its content does not match its hash"),
        ("garble details", "UPDATE audit_events SET details = 'not json' WHERE seq = 2", 2, "event 2: its details are not valid JSON"),
        ("delete a middle event", "DELETE FROM audit_events WHERE seq = 6", 6, "event 6 is missing (deleted?): the chain jumps from 5 to 7"),
        ("delete the first event", "DELETE FROM audit_events WHERE seq = 1", 1, "event 1 is missing"),
        ("reorder two events",
            "UPDATE audit_events SET seq = -3 WHERE seq = 3; UPDATE audit_events SET seq = 3 WHERE seq = 4; UPDATE audit_events SET seq = 4 WHERE seq = -3;",
            3, "event 3: its previous-hash does not link to event 2"),
        ("delete the newest events a checkpoint covers", "DELETE FROM audit_events WHERE seq >= 9", 10,
            "event 10 is missing: a signed checkpoint covers it (events after 8 were deleted?)"),
        ("forge a checkpoint signature", "UPDATE audit_checkpoints SET signature = '\(Base64.encode(Array(repeating: 7, count: 64)))' WHERE seq = 5", 5,
            "checkpoint at event 5: its signature does not verify"),
        ("move a checkpoint's head", "UPDATE audit_checkpoints SET head_hash = (SELECT hash FROM audit_events WHERE seq = 4) WHERE seq = 5", 5,
            "checkpoint at event 5: its signature does not verify"),
    ]

    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"), arguments: tamperings)
    func tamperingIsCaughtAtTheRightEvent(tampering: (name: String, sql: String, seq: Int64, problem: String)) throws {
        try withStoreFixture { fixture in
            try Self.makeChain(fixture, events: 10, checkpoints: [5, 10])
            #expect(try Self.verify(fixture).isIntact)
            try fixture.sqlite(tampering.sql)
            let verification = try Self.verify(fixture)
            #expect(!verification.isIntact, "\(tampering.name) was not caught")
            #expect(verification.firstProblem?.contains(tampering.problem) == true, "\(tampering.name): \(verification.firstProblem ?? "nil")")
            #expect(verification.brokenAtSeq == tampering.seq, "\(tampering.name)")
        }
    }

    /// An attacker who edits an event and recomputes every later hash keeps the chain consistent;
    /// the signed checkpoint still catches it.
    @Test(.enabled(if: sqlite3Available, "needs the sqlite3 command-line tool"))
    func rewrittenChainIsCaughtByTheSignedCheckpoint() throws {
        try withStoreFixture { fixture in
            let events = try Self.makeChain(fixture, events: 10, checkpoints: [5, 10])
            var statements: [String] = []
            var prev = events[2].hash
            for var event in events[3...] {
                if event.seq == 4 { event.details = ["rows": "0", "step": "4"] }
                let input = try AuditEvent.hashInput(
                    seq: event.seq, at: event.at, actor: event.actor, action: event.action, subject: event.subject, details: event.details,
                    prevHash: prev)
                let hash = SHA256.hex(input)
                let details = String(decoding: try CanonicalJSON.encode(event.details), as: UTF8.self)
                statements.append("UPDATE audit_events SET details = '\(details)', prev_hash = '\(prev)', hash = '\(hash)' WHERE seq = \(event.seq);")
                prev = hash
            }
            try fixture.sqlite(statements.joined(separator: " "))
            let verification = try Self.verify(fixture)
            #expect(verification.firstProblem?.contains("event 5: differs from the signed checkpoint") == true, "\(verification.firstProblem ?? "nil")")
            #expect(verification.brokenAtSeq == 5)
            #expect(verification.events == 10)
        }
    }

    /// The head, an event's hash by number, and whether the chain says the workspace keeps an
    /// `audit.head` file (a `workspace.init` naming it, or an `audit.head.create`).
    @Test(arguments: StoreKind.tested)
    func theHeadAndTheHeadFileMarkerAreReadFromTheChain(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            #expect(try store.auditHead() == nil)
            #expect(try store.auditEventHash(seq: 1) == nil)
            #expect(try store.auditHeadFileEstablished() == false)
            let first = try store.appendEvent(actor: "c", action: "workspace.init", details: ["schema": "v1"], at: fixedDate)
            #expect(try store.auditHeadFileEstablished() == false, "an older workspace.init names no head file")
            let second = try store.appendEvent(actor: "c", action: "workspace.init", details: ["audit_head": "audit.head"], at: fixedDate)
            #expect(try store.auditHeadFileEstablished() == true)
            #expect(try store.auditHead()?.seq == 2)
            #expect(try store.auditHead()?.hash == second.hash)
            #expect(try store.auditEventHash(seq: 1) == first.hash)
            #expect(try store.auditEventHash(seq: 3) == nil)
        }
    }

    @Test(arguments: StoreKind.tested)
    func theHeadFileMarkerIsAlsoItsOwnEvent(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            try store.appendEvent(actor: "c", action: "protocol.load", details: ["note": "audit_head"], at: fixedDate)
            #expect(try store.auditHeadFileEstablished() == false, "only workspace.init or audit.head.create counts")
            try store.appendEvent(actor: "c", action: "audit.head.create", details: ["file": "audit.head"], at: fixedDate)
            #expect(try store.auditHeadFileEstablished() == true)
        }
    }

    @Test(arguments: StoreKind.tested)
    func auditEventsCarryNoIdentifiers(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let identity = ParticipantIdentity(name: "Quentin Marchetti-Blum", email: "qmb@example.org", mrn: "MRN-55501234")
            let e = try enrollment(code: "P-0042", identity: identity)
            try store.enroll([e], actor: "coordinator", source: "roster.csv", at: fixedDate)
            let text = try store.auditEvents().map { "\($0.actor) \($0.action) \($0.subject ?? "") \($0.details)" }.joined(separator: "\n")
            for needle in ["Quentin", "Marchetti", "qmb@example.org", "MRN-55501234", "P-0042"] { #expect(!text.contains(needle), "\(needle)") }
            #expect(text.contains(e.participant.id.uuidString.lowercased()))
        }
    }
}
