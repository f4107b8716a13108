import CohortCore
import CohortCrypto
import CohortPostgres
import CohortStore
import Foundation
import Testing

/// The operations both stores run through the one `StudyOperations` (withdraw/erase,
/// commit export), checked on each store the same way.
struct StudyOperationsTests {
    static let at = Timestamp(epochMilliseconds: 1_741_941_000_000)

    static func consent(_ e: Enrollment) -> Consent {
        Consent(
            id: UUID(), participantID: e.participant.id, version: "1.0", documentSHA256: String(repeating: "a", count: 64), signedAt: at,
            signatureKind: .typed, sharing: .broad, status: .active, recordedAt: at)
    }

    /// A store with one enrolled, consented participant who has one record.
    static func study(_ fixture: StoreFixture) throws -> (any StudyStore, Enrollment, ParticipantHandle) {
        let store = try fixture.open(create: true)
        let e = try enrollment(code: "P-0001", identity: ParticipantIdentity(name: "Kwame Mensah", email: "kwame@example.org"))
        try store.enroll([e], actor: "coordinator", source: "test", at: fixedDate)
        let handle = try #require(try store.participant(code: "P-0001")).handle
        try store.recordConsent(consent(e), participant: handle, signatureEvidence: "signed by hand", supersede: [], actor: "coordinator", at: fixedDate)
        let record = StudyStoreTests.record(e.participant, .steps, minute: 60, value: 1200)
        _ = try StudyStoreTests.importRecords(store, [record], pk: handle, file: "a.csv")
        return (store, e, handle)
    }

    @Test(arguments: StoreKind.tested)
    func withdrawingAParticipantTheStoreDoesNotHoldIsNotFoundAndChangesNothing(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let (store, e, handle) = try Self.study(fixture)
            let head = try store.auditHead()
            let missing = ParticipantHandle(rowKey: handle.rowKey + 1000)
            let error = #expect(throws: CohortError.self) {
                try store.withdraw(
                    missing, participantID: e.participant.id, mode: .erase, at: Self.at, by: "staff", actor: "coordinator", reason: nil,
                    consentVersion: nil, receiptID: UUID())
            }
            #expect(error?.code == .notFound)
            #expect(try store.auditHead()?.seq == head?.seq, "no event appended")
            #expect(try store.recordCount() == 1)
        }
    }

    @Test(arguments: StoreKind.tested)
    func eraseDeletesWhatWithdrawalEffectsSaysAndTheEventCommitsToTheSameDetails(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let (store, e, handle) = try Self.study(fixture)
            let receipt = UUID()
            let counts = try store.withdraw(
                handle, participantID: e.participant.id, mode: .erase, at: Self.at, by: "staff", actor: "coordinator", reason: "asked by phone",
                consentVersion: "1.0", receiptID: receipt)
            #expect(counts == WithdrawalCounts(records: 1, consents: 1, identifiersErased: true))
            let pid = e.participant.id.uuidString.lowercased()
            let erased = try #require(try store.participants(withIdentities: true).first)
            #expect(erased.participant.code == "ERASED-" + pid.prefix(8))
            #expect(erased.participant.identity == nil)
            #expect(erased.participant.status == .erased)
            #expect(try store.withdrawalTokenHash(handle) == nil)
            #expect(try store.recordCount() == 0)
            #expect(try store.consentHistory(handle, participantID: e.participant.id).map(\.status) == [.withdrawn], "consent rows stay")
            let event = try #require(try store.auditEvents().last)
            #expect(event.action == "participant.withdraw")
            #expect(event.subject == pid)
            var details = event.details
            let reason = details.removeValue(forKey: "reason") ?? ""
            #expect(reason.hasPrefix("redactable:"), "the chain commits to the reason's salted hash")
            // PostgreSQL's server stamps the login role that appended; SQLite has no roles.
            #expect((details.removeValue(forKey: "db_role") != nil) == (kind == .postgres))
            #expect(
                details == [
                    "mode": "erase", "by": "staff", "records": "1", "consents": "1", "receipt_id": receipt.uuidString.lowercased(),
                    "consent_version": "1.0",
                ])
            #expect(event.revealed?["details.reason"] == AuditEvent.redactedText, "an erase deletes the reason")
            #expect(try store.verifyAudit(publicKey: fixture.signingKey.publicKey).isIntact)
        }
    }

    @Test(arguments: StoreKind.tested, [WithdrawalMode.stop, .exclude, .erase])
    func anExportCommitsUnlessAParticipantLeftOutOfExportsWithdrewSinceTheSnapshot(kind: StoreKind, mode: WithdrawalMode) throws {
        try withStoreFixture(kind) { fixture in
            let (store, e, handle) = try Self.study(fixture)
            let snapshot = try #require(try store.auditHead()).seq
            try store.withdraw(
                handle, participantID: e.participant.id, mode: mode, at: Self.at, by: "staff", actor: "coordinator", reason: nil, consentVersion: nil,
                receiptID: UUID())
            let result = try store.commitExport(
                snapshotSeq: snapshot, participantIDs: [e.participant.id, UUID()], actor: "coordinator", subject: nil, details: ["export_id": "x"],
                at: fixedDate)
            switch (mode, result) {
            case (.stop, .committed(let event)): #expect(event.action == "export.create")
            case (.exclude, .withdrawnSinceSnapshot(let ids)), (.erase, .withdrawnSinceSnapshot(let ids)): #expect(ids == [e.participant.id])
            default: Issue.record("\(mode): unexpected \(result)")
            }
        }
    }

    @Test func anErrorsSQLStateIsItsTypedCauseNotItsMessageText() throws {
        let typed = CohortError(.system, "a statement failed", cause: .sqlState("23505"))
        #expect(PostgresConnection.sqlState(of: typed) == "23505")
        let textOnly = CohortError(.system, "the PostgreSQL query failed: integrity constraint violation (SQLSTATE 23505)")
        #expect(PostgresConnection.sqlState(of: textOnly) == nil, "the message text is never parsed")
    }

    @Test(arguments: StoreKind.tested)
    func aUniqueViolationCarriesItsSQLStateAndAMalformedColumnNamesTableAndColumn(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let (store, _, _) = try Self.study(fixture)
            switch kind {
            case .postgres:
                let error = #expect(throws: CohortError.self) { try fixture.postgres("INSERT INTO cohort_migrations (name) SELECT name FROM cohort_migrations LIMIT 1") }
                #expect(error?.cause == .sqlState("23505"))
                try fixture.postgres("UPDATE participants SET enrolled_on = 'zombie'")
            case .sqlite:
                guard sqlite3Available else { return }
                try fixture.sqlite("UPDATE participants SET enrolled_on = 'zombie'")
            }
            let error = #expect(throws: CohortError.self) { try store.participants() }
            #expect(error?.cause == .malformedColumn(table: "participants", column: "enrolled_on"))
        }
    }
}

/// The store tests' choice of stores: PostgreSQL is never dropped without a stated reason.
struct StoreKindTests {
    @Test func bothStoresRunUnlessASkipReasonIsGivenOutsideCI() {
        #expect(StoreKind.skipPostgresReason([:]) == nil, "no server installed is not a reason: the PostgreSQL cases run and fail")
        #expect(StoreKind.skipPostgresReason(["COHORT_TEST_SKIP_POSTGRES": ""]) == nil, "an empty reason is no reason")
        #expect(StoreKind.skipPostgresReason(["COHORT_TEST_SKIP_POSTGRES": "no server here"]) == "no server here")
        #expect(StoreKind.skipPostgresReason(["COHORT_TEST_SKIP_POSTGRES": "no server here", "CI": "1"]) == nil, "CI runs both")
    }

    @Test func theStoresTestedHereIncludePostgreSQLUnlessSkippedWithAReason() {
        let skipping = StoreKind.skipPostgresReason(ProcessInfo.processInfo.environment) != nil
        #expect(StoreKind.tested == (skipping ? [.sqlite] : StoreKind.allCases))
    }
}

/// The operations over a seam that is no database at all: what they decide does not depend on
/// a store.
struct StudyOperationsSeamTests {
    /// A seam whose participant insert fails as PostgreSQL's does when another coordinator
    /// enrolled the same code between the check and the insert; everything else is inert.
    final class RacingSeam: StoreTransaction {
        var location: String { "seam" }
        var events = 0
        func lockAuditChain() throws {}
        func auditHead() throws -> (seq: Int64, hash: String)? { nil }
        func appendEvent(at: String, actor: String, action: String, subject: String?, details: [String: String]) throws -> AuditEvent {
            events += 1
            return AuditEvent(seq: Int64(events), at: at, actor: actor, action: action, subject: subject, details: details, prevHash: "", hash: "")
        }
        func withdrawalEvents(after seq: Int64, modes: [WithdrawalMode]) throws -> [AuditEvent] { [] }
        func checkpoint(seq: Int64) throws -> AuditCheckpoint? { nil }
        func insertCheckpoint(_ checkpoint: AuditCheckpoint, at: String) throws {}
        func insertRedactable(_ text: RedactableText, owner: String?) throws {}
        func deleteRedactable(owner: String) throws {}
        func studyID() throws -> String? { nil }
        func insertStudy(id: String, createdAt: String) throws {}
        func currentProtocolRevision() throws -> (sha256: String, revision: Int64)? { nil }
        func insertCurrentProtocolRevision(_ row: NewProtocolRevisionRow) throws {}
        func insertTemplate(protocolSHA256: String, path: String, content: Data) throws {}
        func participantExists(code: String) throws -> Bool { false }
        func insertParticipant(_ row: NewParticipantRow) throws {
            throw CohortError(.system, "the PostgreSQL query failed", cause: .sqlState("23505"))
        }
        func lockParticipant(_ participant: ParticipantHandle) throws -> Bool { false }
        func count(_ table: ParticipantTable, of participant: ParticipantHandle) throws -> Int { 0 }
        func markWithdrawn(_ participant: ParticipantHandle, status: ParticipantStatus, at: Timestamp) throws {}
        func eraseIdentity(_ participant: ParticipantHandle, code: String) throws {}
        func insertImportBatch(_ info: ImportBatchInfo, importedAt: String) throws -> Int64 { 1 }
        func recordSink(batchID: Int64, piiKey: [UInt8]) throws -> any StoreRecordSink { throw CohortError(.system, "no sink") }
        func withdrawnParticipants() throws -> [(key: Int64, status: String, withdrawnAtMs: Int64?)] { [] }
        func completeImportBatch(_ id: Int64, counts: ImportCounts, fileSHA256: String, actor: String) throws {}
        func insertConsent(_ consent: Consent, participant: ParticipantHandle, signature: [UInt8]?) throws {}
        func supersedeConsent(_ id: UUID, of participant: ParticipantHandle) throws {}
        func withdrawActiveConsents(of participant: ParticipantHandle) throws {}
        func deleteSignatureEvidence(of participant: ParticipantHandle) throws {}
        func insertWithdrawal(_ row: NewWithdrawalRow) throws {}
        func deleteRecords(of participant: ParticipantHandle) throws {}
    }

    @Test func aCodeEnrolledByAnotherCoordinatorMeanwhileIsAConflictNamingNoCode() throws {
        let seam = RacingSeam()
        let operations = StudyOperations(piiKey: try SecureRandom.bytes(32))
        let e = try enrollment(code: "P-0042", identity: ParticipantIdentity(name: "Kwame Mensah"))
        let error = #expect(throws: CohortError.self) { try operations.enroll(seam, [e], actor: "coordinator", source: "test", at: fixedDate) }
        #expect(error?.code == .conflict)
        #expect(error?.message.contains("another coordinator") == true)
        #expect(error.map { "\($0)" }?.contains("P-0042") == false)
        #expect(seam.events == 0, "no event appended")
    }

    @Test func aParticipantTheSeamDoesNotHoldIsNotFound() throws {
        let seam = RacingSeam()
        let operations = StudyOperations(piiKey: try SecureRandom.bytes(32))
        let error = #expect(throws: CohortError.self) {
            try operations.withdraw(
                seam, ParticipantHandle(rowKey: 1), participantID: UUID(), mode: .erase, at: StudyOperationsTests.at, by: "staff", actor: "c",
                reason: nil, consentVersion: nil, receiptID: UUID())
        }
        #expect(error?.code == .notFound)
        #expect(seam.events == 0)
    }
}
