import CohortCore
import CohortDeid
import CohortPackage
import Foundation

/// The export part of a report: what the signed manifest states, what the verifier found, and
/// how the bag's de-identification report says the data was de-identified. Nothing is taken on
/// trust: every statement of the manifest is shown next to the check that confirms it.
struct ExportSection {
    var export: StudyReport.Export

    var markup: Markup {
        let v = export.verification
        let signature = v.check(named: VerificationCheck.signature)
        let signed = signature?.passed == true
        return """
            <section id="export">
            <h2>Export \(export.archive)</h2>
            <p class="banner \(v.passed ? "pass" : "fail")" id="export-verdict">\(v.passed ? "✔ Verified: all \(v.checks.count) checks passed" : "✘ NOT verified: \(v.failedChecks.count) of \(v.checks.count) checks failed (\(v.failedChecks.joined(separator: ", ")))")</p>
            <p id="signature-status">Signature: \(ReportPage.verdict(signed)) \(signature?.detail ?? "not checked")</p>
            <p id="deliveries">Delivered (export.delivered events naming this archive): \(v.check(named: "deliveries")?.detail ?? "not checked")</p>
            \(export.manifest.map { Self.manifestFacts($0, signed: signed) } ?? "<p>The manifest could not be read: nothing it would state is shown.</p>")
            \(export.manifest.map(Self.contents) ?? "")
            \(Self.deidentification(export.deidentification, manifest: export.manifest))
            \(Self.residual(export.deidentification, verification: v))
            \(Self.checksTable(v, caption: "Verification checks"))
            </section>
            """
    }

    /// The manifest at `url`, read within the verifier's size cap; nil when missing, too large or
    /// not a manifest. What it states is shown as stated; the signature check says whether to believe it.
    static func readManifest(_ url: URL) -> ExportManifest? {
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.intValue ?? Int.max
        guard size <= Verifier.maxManifestBytes, let data = FileManager.default.contents(atPath: url.path) else { return nil }
        return try? JSONDecoder().decode(ExportManifest.self, from: data)
    }

    /// The manifest's facts (study, protocol, policy, recipient, signer, checkpoint).
    static func manifestFacts(_ m: ExportManifest, signed: Bool) -> Markup {
        let facts: [(String, Markup)] = [
            ("Study", "\(m.study.title) (<code>\(m.study.id)</code>)"),
            ("Protocol", "revision \(m.protocolReference.revision), SHA-256 <code>\(m.protocolReference.sha256)</code>"),
            ("Policy SHA-256", "<code>\(m.policySHA256)</code>"),
            ("Recipient", "\(m.recipient)"),
            ("Created", "\(m.createdAt.iso8601) by cohort \(m.toolVersion)"),
            ("Archive", "<code>\(m.archive.fileName)</code>, \(Int(clamping: m.archive.size)) bytes, SHA-256 <code>\(m.archive.sha256)</code>"),
            ("Signer", "\(m.signer.algorithm) <code>\(m.signer.keyFingerprint)</code>"),
            ("Audit checkpoint", "event \(Int(clamping: m.auditCheckpoint.seq)), head <code>\(m.auditCheckpoint.headHash)</code>"),
        ]
        return """
            <h3>Study, protocol, recipient and signer</h3>
            \(signed ? "" : "<p class=\"fail\">The manifest's signature did not verify: treat everything it states as unconfirmed.</p>" as Markup)
            <dl class="facts" id="manifest-facts">\(facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" as Markup })</dl>
            """
    }

    /// Every file of the bag with its rows, size and digest.
    static func contents(_ m: ExportManifest) -> Markup {
        let payload = m.files.filter { $0.path.hasPrefix("data/") }
        let rows = payload.reduce(0) { $0 + ($1.rows ?? 0) }
        let table = ReportPage.table(
            caption: "Files (\(m.files.count), of which \(payload.count) payload files with \(rows) rows)", header: ["Path", "Rows", "Bytes", "SHA-256"],
            rows: m.files.map { f in ["<code>\(f.path)</code>", "\(f.rows.map(String.init) ?? "–")", "\(Int(clamping: f.size))", "<code>\(String(f.sha256.prefix(16)))…</code>"] },
            numeric: [1, 2])
        return """
            <h3>Contents</h3>
            <details><summary>\(m.files.count) files in the bag</summary>\(table)</details>
            """
    }

    /// Rules applied, fields dropped, k and the QI set, suppressions and exclusions.
    /// `readsBag`: whether the bag's own report was looked for (the verifier's page does not extract it).
    static func deidentification(_ report: DeidentificationReport?, manifest: ExportManifest?, readsBag: Bool = true) -> Markup {
        var parts: [Markup] = ["<h3>De-identification</h3>"]
        if let report {
            // A participant column k-anonymity then generalized or emptied says so beside its rule,
            // so "zip3 48" is never read as 48 published ZIP prefixes when the column was suppressed.
            let generalized = manifest?.kAnonymity?.generalized ?? [:]
            parts.append(
                ReportPage.table(
                    caption: "Rules applied (from data/reports/deidentification.json)", header: ["Field", "Transform", "Values", "Then, by k-anonymity"],
                    rows: report.rules.map { rule in
                        let after = Self.publishedColumn(of: rule.field).flatMap { generalized[$0] }.map(Self.describeGeneralization) ?? "–"
                        return ["\(rule.field)", "\(rule.transform.rawValue)", "\(rule.values)", "\(after)"]
                    }, numeric: [2]))
            let dropped = report.droppedUnruled + report.droppedUnsupported
            parts.append(
                ReportPage.table(
                    caption: "Fields dropped (no rule names them, or not supported)", header: ["Field", "Values"],
                    rows: dropped.map { ["\($0.field)", "\($0.values)"] }, numeric: [1]))
            parts.append(
                ReportPage.table(
                    caption: "Direct identifiers removed", header: ["Field", "Values"],
                    rows: report.directIdentifiersRemoved.map { ["\($0.field)", "\($0.values)"] }, numeric: [1]))
        } else if readsBag {
            parts.append("<p>The bag's de-identification report could not be read (see the verification checks).</p>")
        }
        if let k = manifest?.kAnonymity {
            let facts: [(String, Markup)] = [
                ("k requested", "\(k.requestedK)"),
                ("k achieved", "<strong id=\"k-achieved\">\(k.achievedK.map(String.init) ?? "none (no participant)")</strong>"),
                ("Quasi-identifiers", "<span id=\"qi-set\">\(k.quasiIdentifiers.joined(separator: ", "))</span>"),
                ("Equivalence classes", "\(k.classes)"),
                ("Whole columns generalized", "\(k.generalized.isEmpty ? "none" : k.generalized.sorted { $0.key < $1.key }.map { "\($0.key): \(Self.describeGeneralization($0.value))" }.joined(separator: "; "))"),
                ("Cells emptied in small classes", "\(k.suppressedValues.isEmpty ? "none" : k.suppressedValues.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; "))"),
                ("Participants suppressed", "\(k.suppressedParticipants)"),
            ]
            parts.append("<h4>k-anonymity over participants.csv (signed manifest)</h4><dl class=\"facts\">\(facts.map { "<dt>\($0.0)</dt><dd>\($0.1)</dd>" as Markup })</dl>")
        } else if manifest != nil {
            parts.append("<p>The protocol asks for no k-anonymity: the manifest states none.</p>")
        }
        if let manifest {
            parts.append(
                ReportPage.table(
                    caption: "Left out of the export (counts only, as the manifest states them)", header: ["Reason", "Count"],
                    rows: manifest.exclusions.map { ["\($0.reason)", "\($0.count)"] }, numeric: [1], empty: "nothing left out"))
            if let consent = manifest.consent {
                parts.append(
                    "<p id=\"consent-audience\">Consent: made for the <strong>\(consent.audience)</strong> audience; every included participant's sharing scope allows it.</p>")
                parts.append(
                    ReportPage.table(
                        caption: "Records left out by consent (data type: reason)", header: ["Reason", "Count"],
                        rows: consent.recordsLeftOut.map { ["\($0.reason)", "\($0.count)"] }, numeric: [1], empty: "none"))
            }
        }
        return Markup(parts)
    }

    /// The participants.csv column a participant rule publishes (nil for other tables).
    static func publishedColumn(of field: String) -> String? {
        guard field.hasPrefix("participant.") else { return nil }
        let name = String(field.dropFirst("participant.".count))
        return ["zip": "zip3", "birth_date": "birth_year", "age": "age_band"][name] ?? name
    }

    /// `suppressed` → "column suppressed (every value emptied)"; other levels as they are.
    static func describeGeneralization(_ level: String) -> String {
        level == "suppressed" ? "column suppressed (every value emptied)" : "generalized to \(level)"
    }

    /// The residual-PII scan as the export recorded it and as the verifier re-ran it.
    static func residual(_ report: DeidentificationReport?, verification: VerificationReport) -> Markup {
        let recorded: Markup =
            report?.residualScan.map { scan in
                "At export: \(scan.filesScanned) files scanned, \(scan.findingsCount) finding(s)\(scan.findingsCount > 0 ? " (covered by reviewed exceptions)" : "")\(scan.ruleCounts.map { "; " + $0.map(\.description).joined(separator: "; ") } ?? "")."
            } ?? "At export: no scan result recorded."
        let rerun = verification.check(named: "residual PII scan")
        return """
            <h3>Residual-PII scan</h3>
            <p id="residual-scan">\(recorded) Re-run now against the roster: \(rerun.map { ReportPage.verdict($0.passed) } ?? "not run") \(rerun?.detail ?? "")</p>
            """
    }

    /// One row per verifier check.
    static func checksTable(_ v: VerificationReport, caption: String) -> Markup {
        ReportPage.table(
            caption: caption, header: ["Check", "Result", "What was found"],
            rows: v.checks.map { ["\($0.name)", ReportPage.verdict($0.passed), "\($0.detail)"] })
    }
}
