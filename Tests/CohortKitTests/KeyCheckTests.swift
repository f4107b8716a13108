import CohortCore
import CohortCrypto
import CohortKit
import CohortStore
import Foundation
import Testing

/// The key check values kept in the study database (through `Workspace.open`).
struct KeyCheckTests {
    private func temporary() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("keycheck-\(UUID().uuidString)")
    }

    private func replaceKey(_ name: String, in directory: URL, with bytes: [UInt8]) throws {
        let path = Workspace.keysDirectory(of: directory).appendingPathComponent(name).path
        try FileManager.default.removeItem(atPath: path)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
    }

    @Test(arguments: [Keystore.piiKeyFileName, Keystore.studySecretFileName])
    func replacedSecretIsRefusedWithRestoreHint(_ name: String) throws {
        let directory = temporary()
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try Workspace.create(at: directory, actor: "test")
        #expect(throws: Never.self) { try Workspace.open(at: directory, actor: "test") }
        try replaceKey(name, in: directory, with: [UInt8](repeating: 0x5A, count: 32))
        let error = #expect(throws: CohortError.self) { try Workspace.open(at: directory, actor: "test") }
        #expect(error?.code == .security)
        #expect(error?.hint?.contains("\(name) does not match this study: restore the original keys/ folder") == true)
        #expect(error?.location?.file?.hasSuffix("keys/\(name)") == true)
    }

    @Test func workspaceWithoutRecordedCheckValuesGetsThemOnFirstOpen() throws {
        let directory = temporary()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A workspace made without `keys.create` (by hand, or by an older tool): keys and an empty trail.
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let keystore = try Keystore.create(at: Workspace.keysDirectory(of: directory))
        _ = try SQLiteStudyStore(url: directory.appendingPathComponent(SQLiteStudyStore.fileName), piiKey: keystore.piiKey, create: true)

        let workspace = try Workspace.open(at: directory, actor: "test")
        let recorded = try workspace.store.auditEvents().filter { $0.action == "keys.check" }
        #expect(recorded.count == 1)
        #expect(recorded.first?.details["pii_key"] == keystore.fingerprints.piiKey)
        #expect(recorded.first?.details["study_secret"] == keystore.fingerprints.studySecret)
        #expect(try workspace.store.verifyAudit(publicKey: keystore.publicKey).isIntact, "the recorded event is checkpointed")
        // Opening again records nothing new; a different pii.key is then refused.
        _ = try Workspace.open(at: directory, actor: "test")
        #expect(try workspace.store.auditEvents().filter { $0.action == "keys.check" }.count == 1)
        try replaceKey(Keystore.piiKeyFileName, in: directory, with: [UInt8](repeating: 0x01, count: 32))
        let error = #expect(throws: CohortError.self) { try Workspace.open(at: directory, actor: "test") }
        #expect(error?.code == .security)
    }
}
