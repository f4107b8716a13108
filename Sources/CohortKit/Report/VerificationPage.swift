import CohortCore
public import CohortPackage
public import Foundation

/// The auditor's verification report (`cohort verify ARCHIVE --html FILE`): every check with its
/// result and figures, what the signed manifest states (marked unconfirmed when its signature
/// fails), and the commands to re-check the export with stock tools.
public struct VerificationPage: Sendable {
    /// The verifier's result.
    public var report: VerificationReport
    /// The archive verified.
    public var archive: URL
    /// The manifest used (default: beside the archive).
    public var manifest: URL?
    /// The public key file the auditor has, when the key came from one (shown in the commands).
    public var publicKeyPath: String?
    /// When the page was made.
    public var generatedAt: Date

    /// A page for `report`.
    public init(report: VerificationReport, archive: URL, manifest: URL?, publicKeyPath: String?, generatedAt: Date) {
        self.report = report
        self.archive = archive
        self.manifest = manifest
        self.publicKeyPath = publicKeyPath
        self.generatedAt = generatedAt
    }

    /// The page as one self-contained HTML document.
    public func html() -> String {
        let manifestURL = manifest ?? ManifestSigner.manifestURL(forArchive: archive)
        let signatureURL = manifest.map { URL(fileURLWithPath: $0.path + ".sig") } ?? ManifestSigner.signatureURL(forArchive: archive)
        let parsed = ExportSection.readManifest(manifestURL)
        let signed = report.check(named: VerificationCheck.signature)?.passed == true
        let failed = report.failedChecks
        let name = archive.lastPathComponent
        let body: Markup = """
            <header>
            <h1>Verification of \(name)</h1>
            <p class="meta">Made \(Timestamp(generatedAt, in: .gmt).iso8601) by cohort \(CohortVersion.string) · archive <code>\(archive.path)</code></p>
            </header>
            <p class="banner \(report.passed ? "pass" : "fail")" id="verdict">\(report.passed ? "✔ Verified: all \(report.checks.count) checks passed" : "✘ NOT verified: \(failed.count) of \(report.checks.count) checks failed (\(failed.joined(separator: ", ")))")</p>
            <section id="checks">
            <h2>Checks</h2>
            \(ExportSection.checksTable(report, caption: "Every check the verifier made, in order"))
            </section>
            <section id="manifest">
            <h2>What the manifest states</h2>
            \(parsed.map { ExportSection.manifestFacts($0, signed: signed) } ?? "<p>The manifest could not be read.</p>")
            \(parsed.map { ExportSection.deidentification(nil, manifest: $0, readsBag: false) } ?? "")
            \(parsed.map(ExportSection.contents) ?? "")
            </section>
            <section id="recheck">
            <h2>Re-check it yourself</h2>
            <p>With stock tools and the study's public key only (paths quoted for a POSIX shell):</p>
            \(commands(manifestURL: manifestURL, signatureURL: signatureURL, parsed: parsed))
            </section>
            """
        return ReportPage.document(title: "Verification of \(name)", body: body)
    }

    private func commands(manifestURL: URL, signatureURL: URL, parsed: ExportManifest?) -> Markup {
        let q = ReportPage.shellQuoted
        let key = publicKeyPath ?? "signing.pub.pem"
        let stem = archive.lastPathComponent.hasSuffix(".tar.gz") ? String(archive.lastPathComponent.dropLast(7)) : archive.lastPathComponent
        let lines = [
            "# 1. The manifest's Ed25519 signature (prints \"Signature Verified Successfully\")",
            "openssl pkeyutl -verify -pubin -inkey \(q(key)) -rawin -in \(q(manifestURL.path)) -sigfile \(q(signatureURL.path))",
            "# 2. The archive's digest: must equal archive.sha256 in the manifest" + (parsed.map { " (\($0.archive.sha256))" } ?? ""),
            "sha256sum \(q(archive.path))",
            "# 3. Unpack and validate the BagIt bag (every payload file's SHA-256, Payload-Oxum)",
            "mkdir -p bag && tar -xzf \(q(archive.path)) -C bag",
            "bagit.py --validate \(q("bag/" + stem))",
        ]
        return "<pre><code>\(lines.joined(separator: "\n"))</code></pre>"
    }
}
