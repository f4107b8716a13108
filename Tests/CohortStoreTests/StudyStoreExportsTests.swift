import CohortCore
import CohortStore
import Foundation
import Testing
import CohortCrypto

/// The export queries: the withdrawal re-check that commits `export.create` in one transaction,
/// and the look-ups by export id and by archive digest.
struct StudyStoreExportsTests {
    let at = Date(timeIntervalSince1970: 1_795_176_000)

    func withdraw(_ store: any StudyStore, _ id: UUID, mode: String) throws {
        try store.appendEvent(actor: "staff", action: "participant.withdraw", subject: id.uuidString.lowercased(), details: ["mode": mode], at: at)
    }

    @Test(arguments: StoreKind.tested)
    func aWithdrawalAfterTheSnapshotOfAnExportedParticipantRefusesTheCommit(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let (erased, excluded, stopped, elsewhere, early) = (UUID(), UUID(), UUID(), UUID(), UUID())
            try withdraw(store, early, mode: "erase")
            let snapshot = try store.appendEvent(actor: "coordinator", action: "export.begin", details: ["export_id": "e1"], at: at).seq
            try withdraw(store, stopped, mode: "stop")
            try withdraw(store, elsewhere, mode: "erase")
            // Only stop-mode, before-snapshot, or not-in-the-export withdrawals: the commit goes ahead.
            let ok = try store.commitExport(
                snapshotSeq: snapshot, participantIDs: [stopped, early, erased, excluded], actor: "coordinator", subject: "study",
                details: ["export_id": "e1", "archive_sha256": String(repeating: "ab", count: 32)], at: at)
            guard case let .committed(event) = ok else {
                Issue.record("expected the commit, got \(ok)")
                return
            }
            #expect(event.action == "export.create")

            let second = try store.appendEvent(actor: "coordinator", action: "export.begin", details: ["export_id": "e2"], at: at).seq
            try withdraw(store, excluded, mode: "exclude")
            try withdraw(store, erased, mode: "erase")
            let before = try store.auditEvents().count
            let refused = try store.commitExport(
                snapshotSeq: second, participantIDs: [stopped, erased, excluded], actor: "coordinator", subject: "study",
                details: ["export_id": "e2", "archive_sha256": String(repeating: "cd", count: 32)], at: at)
            #expect(refused == .withdrawnSinceSnapshot([excluded, erased]), "in the order the withdrawals committed")
            #expect(try store.auditEvents().count == before, "nothing appended")
            #expect(try store.verifyAudit(publicKey: fixture.signingKey.publicKey).isIntact)
        }
    }

    @Test(arguments: StoreKind.tested)
    func exportEventsAreFoundByExportIDAndArchiveDigest(kind: StoreKind) throws {
        try withStoreFixture(kind) { fixture in
            let store = try fixture.open(create: true)
            let sha = String(repeating: "0f", count: 32)
            try store.appendEvent(actor: "c", action: "export.begin", details: ["export_id": "a"], at: at)
            try store.appendEvent(actor: "c", action: "export.begin", details: ["export_id": "b"], at: at)
            try store.appendEvent(actor: "c", action: "export.create", details: ["export_id": "a", "archive_sha256": sha], at: at)
            try store.appendEvent(actor: "c", action: "export.abandoned", details: ["export_id": "b"], at: at)
            try store.appendEvent(actor: "c", action: "data.import", details: ["export_id": "a"], at: at)
            #expect(try store.exportEvents(exportID: "a").map(\.action) == ["export.begin", "export.create"])
            #expect(try store.exportEvents(exportID: "b").map(\.action) == ["export.begin", "export.abandoned"])
            #expect(try store.exportCreateEvents(archiveSHA256: sha.uppercased()).map { $0.details["export_id"] } == ["a"])
            #expect(try store.exportCreateEvents(archiveSHA256: String(repeating: "00", count: 32)).isEmpty)
        }
    }
}
