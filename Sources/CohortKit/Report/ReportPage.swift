import Foundation
/// The frame every report page shares: one self-contained HTML document with inline CSS, no
/// script and no external resource (a Content-Security-Policy forbids both, so even a value that
/// escaped escaping could not load or run anything), laid out for screen and print.
enum ReportPage {
    /// The complete document.
    static func document(title: String, body: Markup) -> String {
        let page: Markup = """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
            <meta name="generator" content="cohort \(CohortVersion.string)">
            <title>\(title)</title>
            <style>\(Markup(raw: css))</style>
            </head>
            <body>
            \(body)
            </body>
            </html>

            """
        return page.html
    }

    /// A table with a caption; `numeric` columns are right-aligned. An empty table says so.
    static func table(caption: String, header: [String], rows: [[Markup]], numeric: Set<Int> = [], empty: String = "none") -> Markup {
        let head = Markup(header.enumerated().map { index, name in "<th scope=\"col\"\(numeric.contains(index) ? Markup(raw: " class=\"num\"") : "")>\(name)</th>" })
        let bodyRows: [Markup] =
            rows.isEmpty
            ? ["<tr><td colspan=\"\(max(1, header.count))\" class=\"empty\">\(empty)</td></tr>"]
            : rows.map { cells in
                let tds = cells.enumerated().map { index, cell -> Markup in
                    index == 0 ? "<th scope=\"row\">\(cell)</th>" : "<td\(numeric.contains(index) ? Markup(raw: " class=\"num\"") : "")>\(cell)</td>"
                }
                return "<tr>\(tds)</tr>"
            }
        return """
            <table>
            <caption>\(caption)</caption>
            <thead><tr>\(head)</tr></thead>
            <tbody>\(bodyRows)</tbody>
            </table>
            """
    }

    /// A figure: the chart, then the table holding the same figures.
    static func figure(chart: Markup, table: Markup, note: Markup? = nil) -> Markup {
        "<figure>\(chart)\(note.map { "<figcaption>\($0)</figcaption>" } ?? "")\(table)</figure>"
    }

    /// `✔ pass` / `✘ FAIL`: the word carries the meaning, the colour only repeats it.
    static func verdict(_ passed: Bool) -> Markup {
        passed ? "<span class=\"pass\">✔ pass</span>" : "<span class=\"fail\">✘ FAIL</span>"
    }

    /// A word safe to paste into a POSIX shell: plain when it is, else single-quoted.
    static func shellQuoted(_ word: String) -> String { ShellQuote.quote(word) }

    static let css = """
        :root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --met: #2166ac; --missed: #f4a582; --bar: #4472c4; --bad: #b2182b; --good: #1a7f37; }
        * { box-sizing: border-box; }
        body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; color: var(--ink); margin: 0 auto; padding: 24px; max-width: 1100px; }
        h1 { font-size: 1.7em; margin: 0 0 4px; } h2 { font-size: 1.3em; margin: 32px 0 8px; border-bottom: 2px solid var(--line); padding-bottom: 4px; }
        h3 { font-size: 1.08em; margin: 20px 0 6px; }
        .meta, figcaption, .note { color: var(--muted); font-size: 0.92em; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; }
        dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
        .cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 12px 0; padding: 0; list-style: none; }
        .cards li { border: 1px solid var(--line); border-radius: 6px; padding: 8px 14px; min-width: 130px; }
        .cards .figure { display: block; font-size: 1.6em; font-weight: 600; }
        table { border-collapse: collapse; margin: 8px 0 16px; font-size: 0.92em; }
        caption { text-align: left; font-weight: 600; padding: 4px 0; white-space: nowrap; }
        th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
        thead th { background: #f6f8fa; } tbody th { font-weight: normal; }
        .num { text-align: right; font-variant-numeric: tabular-nums; }
        td.empty { color: var(--muted); font-style: italic; }
        code, .mono { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.9em; overflow-wrap: anywhere; }
        pre { background: #f6f8fa; border: 1px solid var(--line); padding: 8px 12px; overflow-x: auto; white-space: pre-wrap; }
        figure { margin: 8px 0 20px; } svg.chart { max-width: 100%; height: auto; display: block; }
        svg .grid { stroke: #e5e7eb; stroke-width: 1; } svg .axis { font-size: 11px; fill: var(--muted); }
        svg .bar { fill: var(--bar); } svg .met { fill: var(--met); } svg .missed { fill: var(--missed); }
        svg .line { fill: none; stroke: var(--met); stroke-width: 2; } svg .point { fill: var(--met); }
        svg .threshold { stroke: var(--bad); stroke-width: 1.5; stroke-dasharray: 6 4; } svg .threshold-label { fill: var(--bad); }
        .legend { display: inline-block; width: 12px; height: 12px; vertical-align: middle; margin: 0 4px 0 12px; }
        .legend.met { background: var(--met); } .legend.missed { background: var(--missed); } .legend.none { border: 1px solid var(--line); }
        .pass { color: var(--good); font-weight: 600; white-space: nowrap; } .fail { color: var(--bad); font-weight: 600; white-space: nowrap; }
        .banner { border: 2px solid; border-radius: 6px; padding: 10px 14px; font-size: 1.15em; margin: 12px 0; }
        .banner.pass { border-color: var(--good); } .banner.fail { border-color: var(--bad); }
        .banner.pass, .banner.fail { white-space: normal; overflow-wrap: anywhere; }
        details { margin: 4px 0 16px; } summary { cursor: pointer; color: var(--muted); }
        .scroll { overflow-x: auto; }
        @media print {
          body { padding: 0; max-width: none; font-size: 11pt; }
          @page { margin: 14mm; }
          h2 { break-after: avoid; } figure, table, .cards { break-inside: avoid; }
          * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
          details > summary { display: none; }
        }
        """
}
