import Foundation
import Testing
import CohortCore
import CohortCrypto

struct KeystoreTests {
    @Test func createWritesFourFilesOwnerOnly() throws {
        try withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("keys")
            let keystore = try Keystore.create(at: directory)
            #expect(try permissions(of: directory) == 0o700)
            for name in Keystore.fileNames {
                let file = directory.appendingPathComponent(name)
                #expect(FileManager.default.fileExists(atPath: file.path), "\(name) missing")
                #expect(try permissions(of: file) == 0o600, "\(name) is not 0600")
            }
            let secret = try Data(contentsOf: directory.appendingPathComponent("study.secret"))
            #expect([UInt8](secret) == keystore.studySecret)
            #expect(keystore.studySecret.count == 32)
            #expect(keystore.piiKey.count == 32)
            #expect(keystore.studySecret != keystore.piiKey)
            // No temporary files are left behind.
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == Keystore.fileNames.sorted())
        }
    }

    @Test func loadReturnsTheSameKeys() throws {
        try withTemporaryDirectory { directory in
            let created = try Keystore.create(at: directory)
            let loaded = try Keystore.load(from: directory)
            #expect(loaded.studySecret == created.studySecret)
            #expect(loaded.piiKey == created.piiKey)
            #expect(loaded.signingKey.rawRepresentation == created.signingKey.rawRepresentation)
            #expect(loaded.publicKey == created.publicKey)
            #expect(loaded.fingerprints == created.fingerprints)
        }
    }

    @Test(arguments: Keystore.fileNames)
    func groupOrWorldReadableFileIsRefused(_ name: String) throws {
        try withTemporaryDirectory { directory in
            try Keystore.create(at: directory)
            let file = directory.appendingPathComponent(name)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
            let error = #expect(throws: CohortError.self) { try Keystore.load(from: directory) }
            #expect(error?.code == .security)
            #expect(error?.location?.file == file.path)
            #expect(error?.hint == "chmod 600 \(file.path)")
            #expect(error?.description.contains("chmod 600") == true)
        }
    }

    @Test func missingFileIsNotFoundWithHint() throws {
        try withTemporaryDirectory { directory in
            try Keystore.create(at: directory)
            try FileManager.default.removeItem(at: directory.appendingPathComponent("pii.key"))
            let error = #expect(throws: CohortError.self) { try Keystore.load(from: directory) }
            #expect(error?.code == .notFound)
            #expect(error?.hint?.contains("cohort keys init") == true)
        }
    }

    @Test func createRefusesToOverwriteUnlessAsked() throws {
        try withTemporaryDirectory { directory in
            let first = try Keystore.create(at: directory)
            let error = #expect(throws: CohortError.self) { try Keystore.create(at: directory) }
            #expect(error?.code == .conflict)
            // The refused attempt changed nothing.
            #expect(try Keystore.load(from: directory).studySecret == first.studySecret)

            let replaced = try Keystore.create(at: directory, overwrite: true)
            #expect(replaced.studySecret != first.studySecret)
            #expect(try Keystore.load(from: directory).studySecret == replaced.studySecret)
            for name in Keystore.fileNames {
                #expect(try permissions(of: directory.appendingPathComponent(name)) == 0o600)
            }
        }
    }

    @Test func mismatchedPublicKeyIsRefused() throws {
        try withTemporaryDirectory { directory in
            try Keystore.create(at: directory)
            let other = try Ed25519PrivateKey.generate()
            let pub = directory.appendingPathComponent("signing.pub.pem")
            try Data(other.publicKey.pemRepresentation.utf8).write(to: pub)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: pub.path)
            let error = #expect(throws: CohortError.self) { try Keystore.load(from: directory) }
            #expect(error?.code == .security)
        }
    }

    @Test func wrongLengthSecretIsRefused() throws {
        try withTemporaryDirectory { directory in
            try Keystore.create(at: directory)
            let secret = directory.appendingPathComponent("study.secret")
            try Data([1, 2, 3]).write(to: secret)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secret.path)
            #expect(throws: CohortError.self) { try Keystore.load(from: directory) }
        }
    }

    @Test func fingerprintsAreStableAndRevealNoSecret() throws {
        let keystore = try Keystore(
            studySecret: [UInt8](repeating: 0x11, count: 32), piiKey: [UInt8](repeating: 0x22, count: 32),
            signingKey: Ed25519PrivateKey(rawRepresentation: [UInt8](repeating: 0x33, count: 32)))
        let prints = keystore.fingerprints
        #expect(prints == keystore.fingerprints)
        for fingerprint in [prints.studySecret, prints.piiKey, prints.signing] {
            #expect(fingerprint.hasPrefix("SHA256:"))
            #expect(fingerprint.count == 7 + 64)
        }
        #expect(prints.studySecret != prints.piiKey)
        // Not the bare hash of the secret, and never the secret itself.
        #expect(prints.studySecret != "SHA256:" + SHA256.hex(keystore.studySecret))
        let text = "\(prints) \(keystore)"
        #expect(!text.contains(Hex.encode(keystore.studySecret)))
        #expect(!text.contains(Hex.encode(keystore.piiKey)))
        #expect(!text.contains(Hex.encode(keystore.signingKey.rawRepresentation)))
        #expect(!String(reflecting: keystore).contains("17, 17, 17"))
        #expect(prints.signing == keystore.publicKey.fingerprint)
    }

    @Test func recipientKeysAreStablePerRecipientAndDifferAcross() throws {
        let keystore = try Keystore(
            studySecret: [UInt8](repeating: 0x11, count: 32), piiKey: [UInt8](repeating: 0x22, count: 32),
            signingKey: Ed25519PrivateKey.generate())
        let analysts = try keystore.recipientKey(for: "analysts")
        #expect(analysts.count == 32)
        #expect(try keystore.recipientKey(for: "analysts") == analysts)
        #expect(try keystore.recipientKey(for: "sponsor") != analysts)
        // Exactly HKDF-SHA256(study secret, salt "cohort/recipient/v1", info recipient).
        let expected = try HKDF.deriveKey(
            inputKeyMaterial: keystore.studySecret, salt: Array("cohort/recipient/v1".utf8), info: Array("analysts".utf8),
            outputByteCount: 32)
        #expect(analysts == expected)
        #expect(throws: CohortError.self) { try keystore.recipientKey(for: "") }
    }

    /// Issue 27: the date-shift key is HKDF-SHA256(study secret, salt "cohort/date-shift/v1",
    /// no info) — no recipient in it; known answer computed with Python's hmac module.
    @Test func theDateShiftKeyIsTheStudysNotARecipients() throws {
        let keystore = try Keystore(
            studySecret: [UInt8](repeating: 0x11, count: 32), piiKey: [UInt8](repeating: 0x22, count: 32),
            signingKey: Ed25519PrivateKey.generate())
        let key = try keystore.dateShiftKey()
        #expect(Hex.encode(key) == "473bf2b792b5e377829def1419d86c84f29907b1eca67b3483eec6d31a14098f")
        for recipient in ["analysts", "sponsor", "date-shift"] { #expect(try keystore.recipientKey(for: recipient) != key) }
    }
}

extension KeystoreTests {
    @Test func dumpShowsNoKeyMaterial() throws {
        let keystore = try Keystore(
            studySecret: [UInt8](repeating: 0x11, count: 32), piiKey: [UInt8](repeating: 0x22, count: 32),
            signingKey: Ed25519PrivateKey(rawRepresentation: [UInt8](repeating: 0x33, count: 32)))
        var dumped = ""
        dump(keystore, to: &dumped)
        dump(keystore.signingKey, to: &dumped)
        #expect(dumped.contains("SHA256:"))
        #expect(!dumped.contains("17\n"))
        #expect(!dumped.contains("34\n"))
        #expect(!dumped.contains("51\n"))
    }
}

extension KeystoreTests {
    @Test func symlinkedKeystoreFolderIsRefused() throws {
        try withTemporaryDirectory { root in
            let real = root.appendingPathComponent("real-keys")
            try Keystore.create(at: real)
            let link = root.appendingPathComponent("keys")
            try FileManager.default.createSymbolicLink(at: link, withDestinationURL: real)
            let error = #expect(throws: CohortError.self) { try Keystore.load(from: link) }
            #expect(error?.code == .security)
            #expect(error?.message.contains("symbolic link") == true)
            #expect(error?.hint?.contains("chmod 700") == true)
            // Also with a trailing slash, which would make stat follow the link.
            #expect(throws: CohortError.self) { try Keystore.load(from: URL(fileURLWithPath: link.path + "/", isDirectory: true)) }
            // Creating keys through a link is refused too.
            let other = root.appendingPathComponent("other")
            try FileManager.default.createDirectory(at: other, withIntermediateDirectories: true)
            let otherLink = root.appendingPathComponent("keys2")
            try FileManager.default.createSymbolicLink(at: otherLink, withDestinationURL: other)
            #expect(throws: CohortError.self) { try Keystore.create(at: otherLink) }
            #expect(try FileManager.default.contentsOfDirectory(atPath: other.path).isEmpty, "nothing was written through the link")
        }
    }

    @Test(arguments: [0o755, 0o750, 0o701])
    func keystoreFolderOpenToOthersIsRefusedWithChmodHint(_ mode: Int) throws {
        try withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("keys")
            let created = try Keystore.create(at: directory)
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: directory.path)
            let error = #expect(throws: CohortError.self) { try Keystore.load(from: directory) }
            #expect(error?.code == .security)
            #expect(error?.location?.file == directory.path)
            #expect(error?.hint == "chmod 700 \(directory.path)")
            try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: directory.path)
            #expect(try Keystore.load(from: directory).fingerprints == created.fingerprints, "after the hint's chmod it loads")
        }
    }

    @Test func createMakesAnExistingFolderPrivate() throws {
        try withTemporaryDirectory { root in
            let directory = root.appendingPathComponent("keys")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            try Keystore.create(at: directory)
            #expect(try permissions(of: directory) == 0o700)
            #expect(throws: Never.self) { try Keystore.load(from: directory) }
        }
    }

    @Test func missingKeystoreFolderIsNotFound() throws {
        try withTemporaryDirectory { root in
            let error = #expect(throws: CohortError.self) { try Keystore.load(from: root.appendingPathComponent("keys")) }
            #expect(error?.code == .notFound)
        }
    }
}
