import CohortCore
import Foundation
import Testing

@testable import CohortExport

/// `datapackage.json`: the types an analyst's reader takes, so codes stay codes.
struct DataPackageTests {
    /// The fixture export's `datapackage.json`.
    static func package() throws -> [String: Any] {
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root)
        let data = try Data(contentsOf: root.appendingPathComponent("data/csv/datapackage.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// table → field name → field object.
    static func fields() throws -> [String: [String: [String: Any]]] {
        var result: [String: [String: [String: Any]]] = [:]
        let package = try package()
        for resource in try #require(package["resources"] as? [[String: Any]]) {
            let name = try #require(resource["name"] as? String)
            let schema = try #require(resource["schema"] as? [String: Any])
            for field in try #require(schema["fields"] as? [[String: Any]]) {
                let fieldName = try #require(field["name"] as? String)
                result[name, default: [:]][fieldName] = field
            }
        }
        return result
    }

    /// Codes with leading zeros, versions that look like numbers, identifiers and text are
    /// declared strings, the fixed-form ones with the pattern their values follow.
    @Test func codesAndTextAreDeclaredStringsWithPatterns() throws {
        let fields = try Self.fields()
        let expectations: [(String, String, String?)] = [
            ("participants", "pseudonym", "^[A-Z2-7]{16}$"), ("participants", "zip3", "^[0-9][0-9*]{2}$"),
            ("participants", "utc_offset", "^[+-][0-9]{2}:[0-9]{2}$"), ("consents", "version", nil),
            ("consents", "document_sha256", "^[0-9a-f]{64}$"), ("consents", "pseudonym", "^[A-Z2-7]{16}$"),
            ("biometrics", "text", nil), ("biometrics", "note", nil), ("biometrics", "unit", nil), ("symptom_logs", "kind", nil),
        ]
        for (table, name, pattern) in expectations {
            let field = try #require(fields[table]?[name], "\(table).\(name) missing")
            #expect(field["type"] as? String == "string", "\(table).\(name)")
            #expect((field["constraints"] as? [String: Any])?["pattern"] as? String == pattern, "\(table).\(name)")
        }
        // The patterns hold for the values the fixture writes.
        for (value, pattern) in [("021", "^[0-9][0-9*]{2}$"), ("9**", "^[0-9][0-9*]{2}$"), ("K7QF2M4XRB6TNV3D", "^[A-Z2-7]{16}$"), ("-05:00", "^[+-][0-9]{2}:[0-9]{2}$")] {
            #expect(value.range(of: pattern, options: .regularExpression) != nil, "\(value) ~ \(pattern)")
        }
        #expect("21".range(of: "^[0-9][0-9*]{2}$", options: .regularExpression) == nil)
    }

    /// The pandas one-liner in docs/export-formats.md, run as written on an export: ZIP3 "021"
    /// stays "021", consent versions stay strings ("1.0", "2.0"), an empty text column is a string
    /// column of missing values, not float64. Needs pandas in `.venv` (scripts/setup-venv.sh):
    /// a failure in CI without it, a printed SKIP elsewhere.
    @Test(.enabled(if: ExportWriterTests.interopOrCI, ExportWriterTests.interopReason))
    func pandasRecipeFromTheDocsKeepsCodesAsText() throws {
        let doc = String(decoding: try Data(contentsOf: ExportFixture.repositoryRoot.appendingPathComponent("docs/export-formats.md")), as: UTF8.self)
        let begin = try #require(doc.range(of: "<!-- pandas-recipe:begin"))
        let end = try #require(doc.range(of: "<!-- pandas-recipe:end -->"))
        let block = doc[begin.upperBound..<end.lowerBound]
        let codeStart = try #require(block.range(of: "```python\n"))
        let codeEnd = try #require(block.range(of: "```", range: codeStart.upperBound..<block.endIndex))
        let recipe = String(block[codeStart.upperBound..<codeEnd.lowerBound])
        // README's "Loading the export" shows the same recipe.
        let readme = String(decoding: try Data(contentsOf: ExportFixture.repositoryRoot.appendingPathComponent("README.md")), as: UTF8.self)
        #expect(readme.contains("```python\n" + recipe + "```"), "README's pandas recipe differs from docs/export-formats.md")

        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root)
        let checks = """
            p, c, b = tables["participants"], tables["consents"], tables["biometrics"]
            assert list(p["zip3"]) == ["021", "000"], list(p["zip3"])
            assert str(p["zip3"].dtype) == "string", p["zip3"].dtype
            assert list(c["version"]) == ["1.0", "2.0", "1.0"], list(c["version"])
            assert str(c["version"].dtype) == "string", c["version"].dtype
            assert str(b["text"].dtype) == "string" and b["text"].isna().all(), b["text"].dtype
            assert str(b["note"].dtype) == "string", b["note"].dtype
            assert str(b["value"].dtype) == "Float64", b["value"].dtype
            assert str(p["birth_year"].dtype) == "Int64", p["birth_year"].dtype
            assert set(tables) >= {"participants", "consents", "biometrics", "codebook"}, set(tables)
            print("pandas recipe ok")
            """
        let result = try Self.runPython(recipe + checks, in: root.appendingPathComponent("data/csv"))
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.contains("pandas recipe ok"))
        // Without the package's types pandas guesses wrong — what the recipe is for.
        let naive = """
            import pandas as pd
            p, c = pd.read_csv("participants.csv"), pd.read_csv("consents.csv")
            print(p["zip3"].dtype, c["version"].dtype, list(p["zip3"]))
            """
        let guessed = try Self.runPython(naive, in: root.appendingPathComponent("data/csv"))
        #expect(guessed.output.contains("int64 float64 [21, 0]"), "\(guessed.output)")
    }

    /// The R recipe of docs/export-formats.md, run as written with Debian's Rscript (readr,
    /// jsonlite): codes stay text, empty text columns are character NA, numbers and years are typed.
    /// Debian's Rscript; under CI the test runs (and fails) without it, elsewhere it is skipped
    /// with the reason shown.
    static let rscriptPath = "/usr/bin/Rscript"
    static let rscriptOrCI = FileManager.default.isExecutableFile(atPath: rscriptPath) || ProcessInfo.processInfo.environment["CI"] != nil

    @Test(.enabled(if: rscriptOrCI, "needs Rscript with readr and jsonlite: apt-get install --no-install-recommends r-base-core r-cran-readr r-cran-jsonlite"))
    func rRecipeFromTheDocsKeepsCodesAsText() throws {
        let doc = String(decoding: try Data(contentsOf: ExportFixture.repositoryRoot.appendingPathComponent("docs/export-formats.md")), as: UTF8.self)
        let begin = try #require(doc.range(of: "<!-- r-recipe:begin"))
        let end = try #require(doc.range(of: "<!-- r-recipe:end -->"))
        let block = doc[begin.upperBound..<end.lowerBound]
        let codeStart = try #require(block.range(of: "```r\n"))
        let codeEnd = try #require(block.range(of: "```", range: codeStart.upperBound..<block.endIndex))
        let recipe = String(block[codeStart.upperBound..<codeEnd.lowerBound])
        let rscript = URL(fileURLWithPath: Self.rscriptPath)
        try #require(
            FileManager.default.isExecutableFile(atPath: rscript.path),
            "Rscript not found (.ci/run installs r-base-core, r-cran-readr, r-cran-jsonlite)")
        let root = try ExportFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: root) }
        try ExportFixture.export(to: root)
        let checks = """
            p <- tables$participants; cs <- tables$consents; b <- tables$biometrics
            stopifnot(is.character(p$zip3), identical(p$zip3, c("021", "000")))
            stopifnot(is.character(cs$version), identical(cs$version, c("1.0", "2.0", "1.0")))
            stopifnot(is.character(b$text), all(is.na(b$text)), is.character(b$note))
            stopifnot(is.double(b$value), is.integer(p$birth_year))
            stopifnot(all(c("participants", "consents", "biometrics", "codebook") %in% names(tables)))
            cat("R recipe ok\n")
            """
        let process = Process()
        process.executableURL = rscript
        process.arguments = ["-e", recipe + checks]
        process.currentDirectoryURL = root.appendingPathComponent("data/csv")
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("R recipe ok"), "\(output)")
    }

    /// Runs `code` with the repository's `.venv` Python in `directory` (the callers are enabled
    /// only when it exists or under CI, where its absence fails them).
    static func runPython(_ code: String, in directory: URL) throws -> (status: Int32, output: String) {
        let python = ExportWriterTests.venvPython
        try #require(FileManager.default.isExecutableFile(atPath: python.path), "pandas recipe cannot run: .venv/bin/python not found (scripts/setup-venv.sh failed?)")
        let process = Process()
        process.executableURL = python
        process.arguments = ["-c", code]
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }
}
