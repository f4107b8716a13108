public import CohortCore
public import Foundation

/// Scans output files for any identifier of any participant on the roster, after writing and
/// before publishing: full names, last names (4+ letters) as whole words, emails, phone numbers
/// in any formatting (7+ digits matching a roster phone's last 10, or its 7-digit local form),
/// birth dates written numerically or with month names, MRNs, study codes, the street line of
/// addresses, and device names that carry a name or a serial number.
///
/// Text is compared in normalized form (case and diacritics folded, punctuation and white
/// space collapsed, apostrophes and possessives removed). Lines of `.json`/`.ndjson` files are
/// JSON-unescaped first, so `Jos\u00e9` is found as `José`. Files are read line by line with a
/// fixed buffer. Findings name file, line and kind, never the value. Typed tokens such as
/// `[NAME]` and pseudonyms (one 16-character word) do not match.
public struct ResidualScanner: Sendable {
    private let index: IdentifierIndex
    private static let markers = Set(ScrubToken.allCases.map(\.rawValue))

    /// A scanner for the identifiers of everyone on `roster`.
    public init(roster: [Participant]) {
        index = IdentifierIndex(roster: roster, mode: .scanner)
    }

    /// Scans `files`; paths in findings are the files' paths as given.
    public func scan(files: [URL]) throws -> [ResidualFinding] {
        var findings: [ResidualFinding] = []
        for file in files {
            findings += try scan(file: file, reportedAs: file.path)
        }
        return findings
    }

    /// Scans every regular file under `directory` (recursively, in path order); paths in findings
    /// are relative to `directory`.
    public func scan(directory: URL) throws -> ResidualScanResult {
        let root = directory.standardizedFileURL.resolvingSymlinksInPath()
        guard
            let enumerator = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [], errorHandler: nil)
        else {
            throw CohortError(.notFound, "the directory to scan cannot be read", at: .init(file: directory.path))
        }
        var files: [(relative: String, url: URL)] = []
        let rootPath = root.path.hasSuffix("/") ? root.path : root.path + "/"
        for case let url as URL in enumerator {
            let values = try? url.resourceValues(forKeys: [.isRegularFileKey])
            guard values?.isRegularFile == true else { continue }
            let path = url.standardizedFileURL.resolvingSymlinksInPath().path
            let relative = path.hasPrefix(rootPath) ? String(path.dropFirst(rootPath.count)) : path
            files.append((relative, url))
        }
        files.sort { $0.relative < $1.relative }
        var findings: [ResidualFinding] = []
        for file in files {
            findings += try scan(file: file.url, reportedAs: file.relative)
        }
        return ResidualScanResult(filesScanned: files.count, findings: findings)
    }

    /// The kinds of identifier in one line of text (`isJSON`: unescape JSON strings first).
    public func kinds(inLine line: String, isJSON: Bool = false) -> Set<IdentifierKind> {
        var result: Set<IdentifierKind> = []
        let text = isJSON ? Self.unescapeJSON(line) : line
        let scalars = Array(text.unicodeScalars)
        if !index.phoneRanges(in: scalars).isEmpty { result.insert(.phone) }
        if !index.birthDateRanges(in: scalars).isEmpty { result.insert(.birthDate) }
        let tokens = TextTokenizer.tokens(scalars)
        let markers = Self.markers
        let matches = index.matches(in: scalars, tokens: tokens) { t in
            let token = tokens[t]
            return token.start > 0 && scalars[token.start - 1] == "[" && token.end < scalars.count && scalars[token.end] == "]"
                && markers.contains(String(String.UnicodeScalarView(scalars[token.start..<token.end])))
        }
        for match in matches { result.insert(match.kind) }
        return result
    }

    private func scan(file: URL, reportedAs name: String) throws -> [ResidualFinding] {
        let ext = file.pathExtension.lowercased()
        let isJSON = ext == "json" || ext == "ndjson" || ext == "jsonl"
        var findings: [ResidualFinding] = []
        try LineReader.forEachLine(of: file) { number, line in
            for kind in kinds(inLine: line, isJSON: isJSON).sorted() {
                findings.append(ResidualFinding(file: name, line: number, kind: kind))
            }
        }
        return findings
    }

    /// `text` with JSON string escapes (`\"`, `\\`, `\/`, `\n`, `\u00e9`, surrogate pairs) decoded.
    static func unescapeJSON(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "\\")) else { return text }
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= scalars.count else { return nil }
            var value: UInt32 = 0
            for k in at..<(at + 4) {
                guard let digit = Int(String(scalars[k]), radix: 16) else { return nil }
                value = value << 4 | UInt32(digit)
            }
            return value
        }
        while i < scalars.count {
            let s = scalars[i]
            guard s == "\\", i + 1 < scalars.count else {
                out.append(s)
                i += 1
                continue
            }
            let next = scalars[i + 1]
            switch next {
            case "n", "r", "t", "b", "f":
                out.append(" ")
                i += 2
            case "u":
                if let high = hex4(i + 2) {
                    if (0xD800..<0xDC00).contains(high), i + 12 <= scalars.count, scalars[i + 6] == "\\",
                        scalars[i + 7] == "u", let low = hex4(i + 8), (0xDC00..<0xE000).contains(low),
                        let combined = Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                    {
                        out.append(combined)
                        i += 12
                    } else if let scalar = Unicode.Scalar(high) {
                        out.append(scalar)
                        i += 6
                    } else {
                        out.append(" ")
                        i += 6
                    }
                } else {
                    out.append(s)
                    i += 1
                }
            default:
                out.append(next)
                i += 2
            }
        }
        return String(out)
    }
}
