import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortPackage

/// A temporary directory holding a small bag written from scratch, a signing key, and helpers
/// to archive, sign, and run stock tools. Remove it with `cleanUp()`.
struct PackageFixture {
    static let createdAt = Timestamp(epochMilliseconds: 1_741_941_000_000)  // 2025-03-14T08:30:00Z
    static let longName =
        "data/json/" + String(repeating: "very-long-directory-name-", count: 3) + "/" + String(repeating: "x", count: 60) + ".json"
    static let nonASCIIName = "data/csv/naïve résumé ü.csv"

    let root: URL
    let bag: URL
    let key: Ed25519PrivateKey

    var bagName: String { bag.lastPathComponent }
    var archiveURL: URL { root.appendingPathComponent("out/\(bagName).tar.gz") }
    var manifestURL: URL { root.appendingPathComponent("out/\(bagName).manifest.json") }
    var signatureURL: URL { root.appendingPathComponent("out/\(bagName).manifest.json.sig") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-package-tests-" + UUID().uuidString)
        key = try Ed25519PrivateKey.generate()
        bag = root.appendingPathComponent(BagWriter.bagName(studyID: "ra-flare", createdAt: Self.createdAt))
        try FileManager.default.createDirectory(at: root.appendingPathComponent("out"), withIntermediateDirectories: true)
        try write("data/csv/symptoms.csv", "pseudonym,day,pain,note\nAB12,2025-01-02,4,\"stiff\nmorning\"\nAB12,2025-01-03,3,ok\r\nCD34,2025-01-02,7,\"said \"\"ouch\"\"\"\n")
        try write("data/fhir/Observation.ndjson", "{\"resourceType\":\"Observation\"}\n\n{\"resourceType\":\"Observation\"}\n")
        try write(
            "data/fhir/bundles/AB12.json",
            "{\"resourceType\":\"Bundle\",\"type\":\"collection\",\"entry\":[{\"fullUrl\":\"urn:uuid:1\"},{\"fullUrl\":\"urn:uuid:2\"},{\"fullUrl\":\"urn:uuid:3\"}]}")
        try write("data/README.txt", "De-identified export.\n")
        try write(Self.longName, "{\"long\":true}\n")
        try write(Self.nonASCIIName, "a,b\n1,2\n")
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: root)
    }

    func write(_ relative: String, _ text: String) throws {
        let url = bag.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }

    var metadata: BagMetadata {
        BagMetadata(
            sourceOrganization: "Example University", studyID: "ra-flare", createdAt: Self.createdAt, toolVersion: "0.1.0",
            protocolRevision: 3, protocolSHA256: String(repeating: "ab", count: 32), recipient: "analyst-1")
    }

    func checkpoint(signedBy signer: Ed25519PrivateKey? = nil) throws -> AuditCheckpoint {
        let head = String(repeating: "cd", count: 32)
        let signature = try (signer ?? key).signature(for: AuditCheckpoint.message(seq: 42, headHash: head))
        return AuditCheckpoint(seq: 42, headHash: head, signature: Base64.encode(signature))
    }

    func manifest(bag contents: BagContents, archive: ArchiveResult) throws -> ExportManifest {
        ExportManifest(
            study: .init(id: "ra-flare", title: "RA flare study"), protocolReference: .init(revision: 3, sha256: String(repeating: "ab", count: 32)),
            policySHA256: String(repeating: "ef", count: 32), recipient: "analyst-1", toolVersion: "0.1.0",
            createdAt: Self.createdAt, archive: .init(archive), files: contents.allFiles,
            exclusions: [.init(reason: "withdrawn_exclude", count: 1)], signer: .init(keyFingerprint: "unset"),
            auditCheckpoint: try checkpoint())
    }

    /// Bags, archives, manifests and signs: the whole export.
    @discardableResult
    func export(level: Int = 6) throws -> PublishedExport {
        let contents = try BagWriter.write(bagDirectory: bag, metadata: metadata)
        return try ExportPackager.publish(
            bagDirectory: bag, archiveURL: archiveURL, createdAt: Self.createdAt, level: level, signer: ManifestSigner(key: key)
        ) { try manifest(bag: contents, archive: $0) }
    }

    func verify(publicKey: Ed25519PublicKey? = nil, extraChecks: [ExtraVerificationCheck] = []) -> VerificationReport {
        Verifier.verify(archive: archiveURL, publicKey: publicKey ?? key.publicKey, extraChecks: extraChecks)
    }

    /// Loads the published manifest, lets `edit` change it, and writes it back re-signed by `signer`.
    func resign(with signer: Ed25519PrivateKey? = nil, _ edit: (inout ExportManifest) -> Void = { _ in }) throws {
        var manifest = try JSONDecoder().decode(ExportManifest.self, from: Data(contentsOf: manifestURL))
        edit(&manifest)
        let bytes = try manifest.encoded()
        try Data(bytes).write(to: manifestURL)
        try Data(try (signer ?? key).signature(for: bytes)).write(to: signatureURL)
    }

    /// Re-archives the bag directory over the published archive and fixes the manifest's
    /// archive digest and size, re-signed: an attacker who holds the key-less parts.
    func rearchiveAndResign() throws {
        try FileManager.default.removeItem(at: archiveURL)
        let result = try ArchiveWriter.write(bagDirectory: bag, to: archiveURL, createdAt: Self.createdAt)
        try resign { $0.archive = .init(result) }
    }
}

/// Runs a stock tool and returns its exit status and standard output.
@discardableResult
func runTool(_ path: String, _ arguments: [String], in directory: URL? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = FileHandle.nullDevice
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: output, as: UTF8.self))
}
