import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to the terminal: data to stdout, messages and progress to stderr.
enum Console {
    static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("error: " + text + "\n").utf8))
    }

    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Whether stderr is a terminal (progress is shown only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    static var stdinIsTerminal: Bool { isatty(0) == 1 }

    /// A progress callback that redraws one stderr line, only on a terminal.
    static func progress(_ label: String) -> (@Sendable (Int) -> Void)? {
        guard stderrIsTerminal else { return nil }
        return { count in
            FileHandle.standardError.write(Data("\r\(label): \(count) rows…".utf8))
        }
    }

    static func endProgress() {
        if stderrIsTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// Asks for confirmation on a terminal; without one, refuses (scripts pass --yes).
    static func confirm(_ question: String) -> Bool {
        guard stdinIsTerminal else { return false }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.lowercased().trimmingCharacters(in: .whitespaces))
    }
}

/// Renders rows as an aligned text table, CSV, or JSON.
enum TableRenderer {
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        var widths = header.map(\.count)
        for row in rows { for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) } }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { i, c in c.padding(toLength: widths[i], withPad: " ", startingAt: 0) }.joined(separator: "  ")
                .trimmingCharacters(in: .whitespaces)
        }
        return ([line(header), widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")] + rows.map(line)).joined(separator: "\n")
    }

    static func csv(_ header: [String], _ rows: [[String]]) -> String {
        func quote(_ t: String) -> String {
            t.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) ? "\"" + t.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : t
        }
        return ([header] + rows).map { $0.map(quote).joined(separator: ",") }.joined(separator: "\r\n")
    }
}
