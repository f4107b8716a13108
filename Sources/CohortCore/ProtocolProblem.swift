/// One problem found in a protocol file, with where it is and what to do.
public struct ProtocolProblem: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable, Codable {
        case error
        case warning
    }

    public var severity: Severity
    public var file: String
    public var line: Int?
    /// Key path inside the document, e.g. `consent.documents[1].template`.
    public var keyPath: String
    public var message: String
    public var hint: String?

    public init(_ severity: Severity, file: String, line: Int?, keyPath: String, message: String, hint: String? = nil) {
        self.severity = severity
        self.file = file
        self.line = line
        self.keyPath = keyPath
        self.message = message
        self.hint = hint
    }

    /// `file:line: error: key.path: message (hint)`.
    public var description: String {
        var text = file
        if let line { text += ":\(line)" }
        text += ": \(severity.rawValue): "
        if !keyPath.isEmpty { text += "\(keyPath): " }
        text += message
        if let hint { text += " (\(hint))" }
        return text
    }
}

/// Thrown when a protocol file has errors; carries every problem found, not just the first.
public struct ProtocolValidationError: Error, Sendable, CustomStringConvertible {
    public var problems: [ProtocolProblem]
    public init(problems: [ProtocolProblem]) { self.problems = problems }
    public var description: String { problems.map(\.description).joined(separator: "\n") }
}

/// Edit distance, for "did you mean" hints.
public enum Suggest {
    /// The candidate closest to `word`, if it is close enough to be a likely typo.
    public static func closest(to word: String, in candidates: [String]) -> String? {
        var best: (String, Int)?
        // The edit distance is at least the difference in length: a candidate whose length is
        // farther off than the limit cannot qualify, so a huge input costs linear time, not n·m.
        let limit = max(2, word.count / 3)
        for candidate in candidates where abs(candidate.count - word.count) <= limit {
            let d = distance(word.lowercased(), candidate.lowercased())
            if d < (best?.1 ?? Int.max) { best = (candidate, d) }
        }
        guard let (candidate, d) = best, d <= limit else { return nil }
        return candidate
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
