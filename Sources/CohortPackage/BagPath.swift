/// Path spelling in BagIt 1.0 manifests (RFC 8493 §2.1.3): `%`, CR and LF in a file name are
/// written `%25`, `%0D`, `%0A`; everything else (spaces, non-ASCII) is written as is, in UTF-8.
enum BagPath {
    static func encode(_ path: String) -> String {
        guard path.contains(where: { $0 == "%" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else { return path }
        var result = ""
        for scalar in path.unicodeScalars {
            switch scalar {
            case "%": result += "%25"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Reverses ``encode(_:)`` (hex digits in either case). Other `%` sequences are left as is.
    static func decode(_ text: String) -> String {
        guard text.contains("%") else { return text }
        let scalars = Array(text.unicodeScalars)
        var result = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if scalars[index] == "%", index + 2 < scalars.count {
                let code = String(scalars[index + 1]).uppercased() + String(scalars[index + 2]).uppercased()
                let replacement: Unicode.Scalar? =
                    switch code {
                    case "25": "%"
                    case "0D": "\r"
                    case "0A": "\n"
                    default: nil
                    }
                if let replacement {
                    result.append(replacement)
                    index += 3
                    continue
                }
            }
            result.append(scalars[index])
            index += 1
        }
        return String(result)
    }

    /// One manifest line: `<hex>  <encoded path>\n`.
    static func manifestLine(sha256: String, path: String) -> String {
        sha256 + "  " + encode(path) + "\n"
    }

    /// Parses a manifest's text into (path, lowercase hex) pairs; lines that do not have the
    /// shape `<hex> <whitespace> <path>` are returned as problems (line numbers, 1-based).
    static func parseManifest(_ text: String) -> (entries: [(path: String, sha256: String)], badLines: [Int]) {
        var entries: [(path: String, sha256: String)] = []
        var badLines: [Int] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.hasSuffix("\r") { line = line.dropLast() }
            if line.isEmpty { continue }
            guard let space = line.firstIndex(where: { $0 == " " || $0 == "\t" }) else {
                badLines.append(lineNumber)
                continue
            }
            let digest = line[..<space]
            let rest = line[space...].drop(while: { $0 == " " || $0 == "\t" })
            guard digest.count == 64, digest.allSatisfy(\.isHexDigit), !rest.isEmpty else {
                badLines.append(lineNumber)
                continue
            }
            entries.append((path: decode(String(rest)), sha256: digest.lowercased()))
        }
        return (entries, badLines)
    }
}
