@testable import CohortKit
import CohortCore
import Foundation
import Testing

/// The name reservation of ``ExportInProgress``: unique names within one second, a fixed name
/// (for `--created-at`) refused when taken.
struct ExportInProgressTests {
    func folder() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-names-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func takenNamesGetTheNextSuffix() throws {
        let out = try folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let base = "study-20261120T120000Z"
        #expect(try ExportInProgress.reserveName(base, in: out, uniqueName: true) == base)
        // The first reservation's staging folder alone makes the name taken (an export running).
        #expect(try ExportInProgress.reserveName(base, in: out, uniqueName: true) == base + "-2")
        // A published archive (no staging folder left) takes its name too.
        _ = FileManager.default.createFile(atPath: out + "/" + base + "-3.tar.gz", contents: Data())
        #expect(try ExportInProgress.reserveName(base, in: out, uniqueName: true) == base + "-4")
        let staging = try FileManager.default.contentsOfDirectory(atPath: out).filter { $0.hasSuffix(".partial-staging") }.sorted()
        #expect(staging == [".\(base)-2.partial-staging", ".\(base)-4.partial-staging", ".\(base).partial-staging"])
    }

    @Test func fixedNameIsRefusedWhenTaken() throws {
        let out = try folder()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let base = "study-20261101T000000Z"
        #expect(try ExportInProgress.reserveName(base, in: out, uniqueName: false) == base)
        #expect(throws: CohortError.self) { try ExportInProgress.reserveName(base, in: out, uniqueName: false) }
        do {
            _ = try ExportInProgress.reserveName(base, in: out, uniqueName: false)
        } catch let error as CohortError {
            #expect(error.code == .conflict)
            #expect(error.hint?.contains("--created-at") == true)
        }
    }
}
