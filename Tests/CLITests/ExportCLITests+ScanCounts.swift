import CohortDemo
import Foundation
import Testing

/// "Clean" says what was checked: the export line, the signed manifest, the report, and
/// `cohort verify` (with and without the workspace) state the files scanned, the values checked
/// for roster forms and the free-text values checked against the allow-list, per rule family
/// with its findings. The counts are recomputed here from the published bag by this test's own
/// reading of the files (CSV cells, JSON strings by key path), not by the scanner.
extension ExportCLITests {
    /// Counts in the bag's `data/` folder: files, values (non-empty CSV cells, non-empty JSON
    /// strings that are not fixed vocabulary) and free-text values (CSV `text`/`note` columns;
    /// JSON `text`, `note`, `….note`, `…note.text`, `…valueString`, `…medicationCodeableConcept.text`).
    struct BagCounts: Equatable {
        var files = 0
        var values = 0
        var freeText = 0
    }

    static let fixedFiles: Set<String> = [
        "codebook.csv", "datapackage.json", "README.txt", "study.json", "manifest.json", "bagit.txt", "bag-info.txt",
    ]
    static let fixedKeys: Set<String> = [
        "resourceType", "system", "code", "unit", "status", "id", "fullUrl", "reference", "url", "uri", "kind", "type",
    ]

    static func isFreeText(_ path: [String]) -> Bool {
        let joined = path.joined(separator: ".")
        return joined == "text" || joined == "note" || joined.hasSuffix("note.text") || joined.hasSuffix("valueString")
            || joined.hasSuffix("medicationCodeableConcept.text") || joined.hasSuffix(".note")
    }

    static func count(json: Any, path: [String], into counts: inout BagCounts) {
        switch json {
        case let object as [String: Any]:
            for (key, value) in object { count(json: value, path: path + [key], into: &counts) }
        case let array as [Any]:
            for value in array { count(json: value, path: path, into: &counts) }
        case let string as String where !string.isEmpty:
            guard let key = path.last, !fixedKeys.contains(key), !(key == "display" && path.contains("coding")) else { return }
            counts.values += 1
            if isFreeText(path) { counts.freeText += 1 }
        default:
            break
        }
    }

    static func count(bagData data: URL) throws -> BagCounts {
        var counts = BagCounts()
        let files = try #require(FileManager.default.enumerator(at: data, includingPropertiesForKeys: nil)?.allObjects as? [URL])
        for url in files where !url.hasDirectoryPath {
            let relative = url.path.replacingOccurrences(of: data.path + "/", with: "")
            if fixedFiles.contains(url.lastPathComponent) || relative.hasPrefix("reports/") { continue }
            counts.files += 1
            let text = String(decoding: try Data(contentsOf: url), as: UTF8.self)
            switch url.pathExtension {
            case "csv":
                let rows = CSVRows.parse(text)
                let header = rows.first ?? []
                for row in rows.dropFirst() {
                    for (i, cell) in row.enumerated() where !cell.isEmpty {
                        counts.values += 1
                        if i < header.count, ["text", "note"].contains(header[i]) { counts.freeText += 1 }
                    }
                }
            case "json":
                count(json: try JSONSerialization.jsonObject(with: Data(text.utf8)), path: [], into: &counts)
            case "ndjson":
                for line in text.split(separator: "\n") where !line.isEmpty {
                    count(json: try JSONSerialization.jsonObject(with: Data(line.utf8)), path: [], into: &counts)
                }
            default:
                Issue.record("the bag holds a file this count does not read: \(relative)")
            }
        }
        return counts
    }

    @Test func cleanStatesWhatWasCheckedWithCountsRecomputedFromTheBag() throws {
        let cli = try demo()
        defer { cli.cleanup() }
        // Past the embargo: the demo's notes are published (free text to count).
        let (r, maybe) = try export(cli, ["--created-at", CLI.pastTheEmbargo])
        #expect(r.status == 0, "\(r.output)")
        let published = try #require(maybe, "\(r.output)")
        let bag = try extract(published.archive, into: cli.path("unpacked"))
        let counts = try Self.count(bagData: bag.appendingPathComponent("data"))
        #expect(counts.freeText > 0 && counts.values > counts.freeText, "\(counts)")
        let stated = "\(counts.files) files; roster forms: \(counts.values) values, 0 findings; unknown tokens: \(counts.freeText) free-text values, 0 findings"

        // The export line.
        #expect(r.stdout.contains("residual PII scan: clean (\(stated))"), "\(r.stdout)")
        // The signed manifest (an optional key, so older manifests decode).
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: published.manifest))) as? [String: Any])
        let scan = try #require(manifest["residual_scan"] as? [String: Any], "\(manifest.keys)")
        #expect(scan["files_scanned"] as? Int == counts.files)
        #expect(scan["values_scanned"] as? Int == counts.values)
        #expect(scan["free_text_values"] as? Int == counts.freeText)
        let rules = try #require(scan["rules"] as? [[String: Any]])
        #expect(rules.map { $0["rule"] as? String } == ["roster forms", "unknown tokens"])
        #expect(rules.map { $0["values_checked"] as? Int } == [counts.values, counts.freeText])
        #expect(rules.allSatisfy { $0["findings"] as? Int == 0 })
        // The report in the bag.
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: bag.appendingPathComponent("data/reports/deidentification.json"))) as? [String: Any])
        let reported = try #require(report["residual_scan"] as? [String: Any])
        #expect(reported["values_scanned"] as? Int == counts.values)
        #expect((reported["rule_counts"] as? [[String: Any]])?.map { $0["values_checked"] as? Int } == [counts.values, counts.freeText])
        // `cohort verify` with the workspace re-runs the scan and shows the manifest's statement.
        let v = try cli.run(["verify", published.archive, "-w", cli.workspace])
        #expect(v.status == 0, "\(v.output)")
        let line = v.stdout.split(whereSeparator: \.isNewline).first { $0.hasPrefix("✔ residual PII scan  ") }.map(String.init) ?? ""
        #expect(line.contains("roster forms: \(counts.values) values, 0 findings; unknown tokens: \(counts.freeText) free-text values"), "\(v.stdout)")
        #expect(line.contains("at export: " + stated), "\(v.stdout)")
        // Without it, the manifest's statement is shown as recorded.
        let auditor = try cli.run(["verify", published.archive, "--public-key", cli.workspace + "/keys/signing.pub.pem"])
        #expect(auditor.status == 0, "\(auditor.output)")
        #expect(passed(auditor, "residual PII scan at export"), "\(auditor.stdout)")
        #expect(auditor.stdout.contains(stated), "\(auditor.stdout)")
    }
}
