import CohortCore
import Foundation
import Testing

@testable import CohortKit

struct ReportFileTests {
    @Test func replacesTheTargetAndLeavesNoPartialFile() throws {
        let folder = try ReportFixture.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("report.html")
        try Data("old".utf8).write(to: target)
        try ReportFile.write("<p>new</p>", to: target)
        #expect(try String(contentsOf: target, encoding: .utf8) == "<p>new</p>")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["report.html"])
        let mode = try FileManager.default.attributesOfItem(atPath: target.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
    }

    @Test func aMissingFolderIsAnErrorNamingTheFile() throws {
        let folder = try ReportFixture.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("missing/report.html")
        do {
            try ReportFile.write("<p>x</p>", to: target)
            Issue.record("writing into a missing folder must fail")
        } catch let error as CohortError {
            #expect(error.location?.file == target.path)
            #expect(error.hint?.contains("exists and is writable") == true)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty)
    }

    @Test func aFolderInTheWayKeepsItAndRemovesThePartialFile() throws {
        let folder = try ReportFixture.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("report.html")
        try FileManager.default.createDirectory(at: target.appendingPathComponent("inside"), withIntermediateDirectories: true)
        #expect(throws: CohortError.self) { try ReportFile.write("<p>x</p>", to: target) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["report.html"])
    }
}
