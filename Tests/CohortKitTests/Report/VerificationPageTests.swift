import CohortCrypto
import CohortCore
import Foundation
import Testing

@testable import CohortKit
import CohortPackage

struct VerificationPageTests {
    @Test func listsEveryCheckAndQuotesTheRecheckCommands() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let folder = try ReportFixture.folder().appendingPathComponent("it's here", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let stem = demo.archive.lastPathComponent.replacingOccurrences(of: ".tar.gz", with: "")
        for name in [".tar.gz", ".manifest.json", ".manifest.json.sig"] {
            try FileManager.default.copyItem(
                at: demo.archive.deletingLastPathComponent().appendingPathComponent(stem + name), to: folder.appendingPathComponent(stem + name))
        }
        let archive = folder.appendingPathComponent(stem + ".tar.gz")
        let report = try VerifyService.verify(archive: archive, manifest: nil, publicKey: workspace.keystore.publicKey, workspace: workspace)
        let html = VerificationPage(report: report, archive: archive, manifest: nil, publicKeyPath: "keys/signing.pub.pem", generatedAt: demo.now).html()
        #expect(report.passed)
        for check in report.checks { #expect(html.contains("<th scope=\"row\">\(Markup.escape(check.name))</th>")) }
        #expect(html.components(separatedBy: "✔ pass").count - 1 == report.checks.count)
        // The path holds a quote and a space: single-quoted for the shell, then escaped for HTML.
        let quoted = Markup.escape(ReportPage.shellQuoted(archive.path))
        #expect(quoted.hasPrefix("&#39;") && html.contains("sha256sum \(quoted)"))
        #expect(html.contains("openssl pkeyutl -verify -pubin -inkey keys/signing.pub.pem -rawin"))
        #expect(ReportPage.shellQuoted("/tmp/it's here/x.tar.gz") == "'/tmp/it'\\''s here/x.tar.gz'")
    }

    @Test func aForgedManifestIsShownAsUnconfirmed() throws {
        let (workspace, demo) = try ReportFixture.workspace()
        let folder = try ReportFixture.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let stem = demo.archive.lastPathComponent.replacingOccurrences(of: ".tar.gz", with: "")
        for name in [".tar.gz", ".manifest.json.sig"] {
            try FileManager.default.copyItem(
                at: demo.archive.deletingLastPathComponent().appendingPathComponent(stem + name), to: folder.appendingPathComponent(stem + name))
        }
        let original = try String(contentsOf: demo.archive.deletingLastPathComponent().appendingPathComponent(stem + ".manifest.json"), encoding: .utf8)
        try Data(original.replacingOccurrences(of: "Example Analytics Core", with: "<b>Mallory</b>").utf8).write(to: folder.appendingPathComponent(stem + ".manifest.json"))
        let archive = folder.appendingPathComponent(stem + ".tar.gz")
        let report = try VerifyService.verify(archive: archive, manifest: nil, publicKey: workspace.keystore.publicKey, workspace: workspace)
        let html = VerificationPage(report: report, archive: archive, manifest: nil, publicKeyPath: nil, generatedAt: demo.now).html()
        #expect(!report.passed && report.check(named: "signature")?.passed == false)
        #expect(html.contains("NOT verified"))
        #expect(html.contains("treat everything it states as unconfirmed"))
        #expect(html.contains("&lt;b&gt;Mallory&lt;/b&gt;") && !html.contains("<b>Mallory"))
    }
}
