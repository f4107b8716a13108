import Foundation
import Testing

/// Headless Chromium from Debian's `chromium` package: renders a page, dumps its DOM, takes a
/// screenshot, and collects the console lines (script errors, CSP violations) it logs.
enum Browser {
    static let path: String? = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether the browser tests run: always in CI (`CI` set), where a missing chromium must fail
    /// them; elsewhere only when chromium is installed (skipped visibly otherwise).
    static var enabled: Bool { ProcessInfo.processInfo.environment["CI"] != nil || path != nil }

    /// Where screenshots go: `.build/test-output/<suite>/`, kept after the run.
    static func outputFolder(_ suite: String) throws -> URL {
        let url = CLI.repoRoot.appendingPathComponent(".build/test-output/\(suite)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    struct Rendered {
        var dom: String
        /// `CONSOLE` lines of Chromium's log: anything a page script or the CSP reported.
        var consoleLines: [String]
    }

    /// Renders `page` once for its DOM (with console logging) and once for a PNG screenshot.
    static func render(_ page: URL, screenshot: URL, in folder: URL) throws -> Rendered {
        let chromium = try #require(path, "chromium is not installed (CI installs Debian's chromium package)")
        let common = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions", "--hide-scrollbars",
            "--user-data-dir=" + folder.appendingPathComponent("profile-\(UUID().uuidString)").path,
        ]
        let (status, out, err) = try run(chromium, common + ["--enable-logging=stderr", "--v=0", "--dump-dom", page.absoluteString])
        try #require(status == 0, "chromium --dump-dom failed (\(status)): \(err.suffix(2000))")
        let console = err.split(separator: "\n").map(String.init).filter { $0.contains(":CONSOLE") || $0.contains("Uncaught") }
        let (shotStatus, _, shotErr) = try run(chromium, common + ["--screenshot=" + screenshot.path, "--window-size=1280,3000", page.absoluteString])
        try #require(shotStatus == 0, "chromium --screenshot failed (\(shotStatus)): \(shotErr.suffix(2000))")
        return Rendered(dom: out, consoleLines: console)
    }

    /// Runs a process with a 120-second limit.
    static func run(_ executable: String, _ args: [String]) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = args
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = FileManager.default.temporaryDirectory.path
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let timer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + 120, execute: timer)
        // Both pipes drain concurrently so neither fills up.
        nonisolated(unsafe) var errData = Data()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        timer.cancel()
        return (process.terminationStatus, String(decoding: outData, as: UTF8.self), String(decoding: errData, as: UTF8.self))
    }

    /// Renders a copy of `page` without its Content-Security-Policy and with `script` run at the
    /// end of the body (it measures the layout and writes what it found into attributes), in a
    /// window `width` pixels wide, and returns the DOM Chromium then holds.
    static func measure(page: String, in folder: URL, width: Int, script: String) throws -> String {
        var html = try String(contentsOfFile: page, encoding: .utf8)
        let csp = try #require(html.range(of: #"<meta http-equiv="Content-Security-Policy"[^>]*>"#, options: .regularExpression))
        html.removeSubrange(csp)
        html = html.replacingOccurrences(of: "</body>", with: "<script>\(script)</script></body>")
        let measured = folder.appendingPathComponent("measured-\(UUID().uuidString).html")
        try html.write(to: measured, atomically: true, encoding: .utf8)
        let chromium = try #require(path, "chromium is not installed (CI installs Debian's chromium package)")
        let (status, dom, err) = try run(chromium, [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions", "--window-size=\(width),900",
            "--user-data-dir=" + folder.appendingPathComponent("profile-\(UUID().uuidString)").path, "--dump-dom", measured.absoluteString,
        ])
        try #require(status == 0, "chromium failed: \(err.suffix(1000))")
        return dom
    }

    /// Strict HTML5 parse errors of `files` (html5lib through `Tests/interop/check_html.py`),
    /// or nil when the check was skipped — visibly: the reason is printed.
    static func strictParseProblems(_ files: [String]) throws -> [String]? {
        guard ExportCLITests.hasPython else {
            print("skipped the strict HTML5 parse: no .venv (run scripts/setup-venv.sh)")
            return nil
        }
        let script = CLI.repoRoot.appendingPathComponent("Tests/interop/check_html.py").path
        let (status, out) = try CLI.tool(ExportCLITests.python, [script] + files)
        return status == 0 ? [] : out.split(separator: "\n").map(String.init)
    }

    /// A PNG's width and height from its IHDR chunk.
    static func pngSize(_ url: URL) throws -> (Int, Int) {
        let bytes = [UInt8](try Data(contentsOf: url).prefix(24))
        try #require(bytes.count == 24 && bytes[1...3] == [0x50, 0x4E, 0x47], "\(url.path) is not a PNG")
        func be(_ at: Int) -> Int { bytes[at..<(at + 4)].reduce(0) { $0 << 8 | Int($1) } }
        return (be(16), be(20))
    }
}

/// `cohort report` and `cohort verify --html` end to end, rendered in headless Chromium; the
/// figures in the rendered DOM are recomputed from the study database (sqlite3 on study.db, or SQL on
/// PostgreSQL) and the published files.
@Suite(.serialized)
struct ReportCLITests {
    static func demo() throws -> CLI {
        let cli = try CLI()
        let r = try cli.run(["demo", "--dir", cli.workspace, "--participants", "12", "--seed", "5"])
        try #require(r.status == 0, "demo failed: \(r.output)")
        return cli
    }

    static func archive(_ cli: CLI) throws -> String {
        let exports = cli.workspace + "/exports"
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: exports).filter { $0.hasSuffix(".tar.gz") }.sorted().last)
        return exports + "/" + name
    }

    static func sql(_ cli: CLI, _ query: String) throws -> String {
        let (status, out) = try cli.sql(query)
        try #require(status == 0, "sql: \(out)")
        return out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    // Needs chromium: runs in CI always (and fails there without it), elsewhere only where it is installed.
    @Test(.enabled(if: Browser.enabled, "needs headless Chromium (Debian package chromium); skipped: not installed"))
    func studyReportRendersInChromiumWithTheStoresFigures() throws {
        let cli = try Self.demo()
        defer { cli.cleanup() }
        let archive = try Self.archive(cli)
        let out = cli.path("report.html")
        let r = try cli.ws("report", "--out", out, "--export", archive)
        try #require(r.status == 0, "report failed: \(r.output)")
        #expect(r.stdout.contains("Wrote \(out)"))

        let shot = try Browser.outputFolder("ReportCLITests").appendingPathComponent("study-report.png")
        let page = try Browser.render(URL(fileURLWithPath: out), screenshot: shot, in: cli.directory)
        print("study report screenshot: \(shot.path)")
        #expect(page.consoleLines.isEmpty, "console: \(page.consoleLines)")
        let (width, height) = try Browser.pngSize(shot)
        #expect(width == 1280 && height == 3000)

        if let problems = try Browser.strictParseProblems([out]) { #expect(problems.isEmpty, "html5lib: \(problems)") }

        let dom = page.dom
        for heading in [
            "Study summary", "Enrollment over time", "Consent versions and re-consents", "Withdrawals by mode", "Compliance per rule",
            "Participants below threshold", "De-identification", "Residual-PII scan",
        ] {
            #expect(dom.contains(">\(heading)<"), "heading \(heading)")
        }
        // Figures, recomputed from the study database.
        let enrolled = try Self.sql(cli, "SELECT count(*) FROM participants")
        let withdrawn = try Self.sql(cli, "SELECT count(*) FROM participants WHERE status <> 'active'")
        let records = try Self.sql(cli, "SELECT count(*) FROM records")
        #expect(dom.contains("id=\"total-enrolled\"><span class=\"figure\">\(enrolled)</span>"))
        #expect(dom.contains("id=\"total-withdrawn\"><span class=\"figure\">\(withdrawn)</span>"))
        #expect(dom.contains("id=\"total-records\"><span class=\"figure\">\(records)</span>"))
        // k, recomputed from the published participants.csv over the QI set the page names.
        let bag = cli.path("bag")
        try FileManager.default.createDirectory(atPath: bag, withIntermediateDirectories: true)
        #expect(try CLI.tool("/usr/bin/tar", ["-xzf", archive, "-C", bag]).0 == 0)
        let bagName = try #require(try FileManager.default.contentsOfDirectory(atPath: bag).first)
        let csv = try String(contentsOfFile: "\(bag)/\(bagName)/data/csv/participants.csv", encoding: .utf8)
        let lines = csv.split(whereSeparator: \.isNewline).map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        let qiText = try #require(dom.range(of: "<span id=\"qi-set\">").map { String(dom[$0.upperBound...].prefix { $0 != "<" }) })
        let columns = try qiText.components(separatedBy: ", ").map { name in try #require(lines[0].firstIndex(of: name), "QI \(name)") }
        var classes: [[String]: Int] = [:]
        for row in lines.dropFirst() { classes[columns.map { row[$0] }, default: 0] += 1 }
        let k = try #require(classes.values.min())
        #expect(dom.contains("<strong id=\"k-achieved\">\(k)</strong>"))
        #expect(dom.contains("✔ Verified: all"))
        // Below threshold: the same participants `cohort compliance --format json` marks non-compliant.
        let json = try cli.ws("compliance", "--format", "json")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let participants = try #require(object["participants"] as? [[String: Any]])
        let below = participants.filter { ($0["rules"] as? [[String: Any]] ?? []).contains { $0["compliant"] as? Bool == false } }.count
        #expect(dom.contains("<p id=\"below-count\">\(below) participant(s) below"))
        // No element the page did not write itself.
        #expect(!dom.contains("<script") && !dom.contains("<iframe"))
    }

    @Test(.enabled(if: Browser.enabled, "needs headless Chromium (Debian package chromium); skipped: not installed"))
    func verifyHTMLRendersEveryCheckInChromium() throws {
        let cli = try Self.demo()
        defer { cli.cleanup() }
        let archive = try Self.archive(cli)
        let out = cli.path("verify.html")
        let r = try cli.ws("verify", archive, "--html", out)
        try #require(r.status == 0, "verify failed: \(r.output)")
        let checks = r.stdout.split(separator: "\n").filter { $0.hasPrefix("✔ ") }.count
        #expect(checks > 10)

        let shot = try Browser.outputFolder("ReportCLITests").appendingPathComponent("verify-report.png")
        let page = try Browser.render(URL(fileURLWithPath: out), screenshot: shot, in: cli.directory)
        print("verification report screenshot: \(shot.path)")
        #expect(page.consoleLines.isEmpty, "console: \(page.consoleLines)")
        if let problems = try Browser.strictParseProblems([out]) { #expect(problems.isEmpty, "html5lib: \(problems)") }
        #expect(page.dom.contains("✔ Verified: all \(checks) checks passed"))
        #expect(page.dom.components(separatedBy: "✔ pass").count - 1 == checks)
        for heading in ["Checks", "What the manifest states", "Re-check it yourself"] { #expect(page.dom.contains(">\(heading)<")) }
        // The archive's digest on the page is the one sha256sum computes.
        let (status, sum) = try CLI.tool("/usr/bin/sha256sum", [archive])
        #expect(status == 0)
        #expect(page.dom.contains(String(sum.prefix(64))))
    }

    /// The study report of the 50-participant demo reads as a report, not a scroll of tables: the
    /// per-participant and per-week tables are folded, so the page (1280 px wide) stays under
    /// 6,000 px (it was ~11,400 with them open).
    @Test(.enabled(if: Browser.enabled, "needs headless Chromium (Debian package chromium); skipped: not installed"))
    func theStudyReportIsShortEnoughToRead() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let demo = try cli.run(["demo", "-w", cli.workspace])
        try #require(demo.status == 0, "\(demo.output)")
        let out = cli.path("report.html")
        let r = try cli.ws("report", "--out", out)
        try #require(r.status == 0, "\(r.output)")
        let dom = try Browser.measure(
            page: out, in: cli.directory, width: 1280, script: "document.body.setAttribute('data-height', String(document.documentElement.scrollHeight));")
        let height = try #require(dom.firstRange(of: #/data-height="([0-9]+)"/#).map { Int(dom[$0].dropFirst(13).dropLast()) ?? 0 })
        #expect(height > 1000 && height < 6000, "the report is \(height) px tall")
        #expect(dom.contains("Days met per participant (49, lowest rate first)"), "the erased participant has no row")
    }

    /// A failing verification's banner names many checks: in a narrow window it wraps inside its
    /// box. Measured by Chromium's layout (a copy of the page with a measuring script, which the
    /// page's own CSP would forbid): the banner's content is no wider than the banner.
    @Test(.enabled(if: Browser.enabled, "needs headless Chromium (Debian package chromium); skipped: not installed"))
    func aFailureBannerStaysInsideItsBox() throws {
        let cli = try Self.demo()
        defer { cli.cleanup() }
        let archive = try Self.archive(cli)
        let whole = try Data(contentsOf: URL(fileURLWithPath: archive))
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: archive))
        let out = cli.path("verify.html")
        let r = try cli.ws("verify", archive, "--html", out)
        #expect(r.status == 1, "\(r.output)")
        let dom = try Browser.measure(
            page: out, in: cli.directory, width: 480,
            script: "const b = document.getElementById('verdict'); document.body.setAttribute('data-overflow', String(b.scrollWidth > b.clientWidth));")
        #expect(dom.contains("NOT verified"))
        #expect(dom.contains("data-overflow=\"false\""), "the banner's text overflows its box: \(dom.prefix(400))")
    }

    @Test(.enabled(if: Browser.enabled, "needs headless Chromium (Debian package chromium); skipped: not installed"))
    func aHostileStudyTitleIsTextInTheBrowser() throws {
        let cli = try CLI()
        defer { cli.cleanup() }
        let hostile = "<img src=x onerror=\\\"console.error('pwned')\\\"><script>console.error('pwned')</script> & Co"
        let original = try String(contentsOf: CLI.repoRoot.appendingPathComponent("protocols/axspa-wearables.yaml"), encoding: .utf8)
        let yaml = original.replacingOccurrences(
            of: "title: \"AxSpA-Wear: daily symptoms and wearable signals in axial spondyloarthritis\"", with: "title: \"\(hostile)\"")
        #expect(yaml != original)
        // Templates resolve from the protocol folder's parent: a project copy in the test folder.
        let project = cli.directory.appendingPathComponent("project", isDirectory: true)
        try FileManager.default.createDirectory(at: project.appendingPathComponent("protocols"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: CLI.repoRoot.appendingPathComponent("templates"), to: project.appendingPathComponent("templates"))
        let protocolFile = project.appendingPathComponent("protocols/hostile.yaml")
        try Data(yaml.utf8).write(to: protocolFile)
        let initResult = try cli.run(["init", "--dir", cli.workspace, "--protocol", protocolFile.path])
        try #require(initResult.status == 0, "init failed: \(initResult.output)")
        try cli.enrollTwo()
        let out = cli.path("hostile.html")
        let r = try cli.ws("report", "--out", out)
        try #require(r.status == 0, "report failed: \(r.output)")
        let page = try Browser.render(URL(fileURLWithPath: out), screenshot: cli.path("hostile.png").asURL, in: cli.directory)
        #expect(page.consoleLines.isEmpty, "console: \(page.consoleLines)")
        #expect(!page.dom.contains("<img") && !page.dom.contains("<script"))
        #expect(page.dom.contains("<h1>&lt;img src=x onerror=\"console.error('pwned')\"&gt;&lt;script&gt;console.error('pwned')&lt;/script&gt; &amp; Co</h1>"))
    }
}

extension String {
    fileprivate var asURL: URL { URL(fileURLWithPath: self) }
}
