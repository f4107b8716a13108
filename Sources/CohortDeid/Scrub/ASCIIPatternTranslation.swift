/// The scrubber's patterns (written for ICU, as `NSRegularExpression` runs them) rewritten for
/// PCRE2 so that the two engines find the same matches **on text whose bytes are all ASCII**,
/// and on text whose other scalars are all inert (``PCRE2Route`` says why each construct below
/// treats an inert scalar alike in both) — the only text ``PatternPass`` and ``WordPatternPass``
/// hand to PCRE2.
///
/// Why the same, construct by construct (ICU: the ICU regular-expression user guide and what its
/// `NSRegularExpression` does on Linux, checked in `PatternEngineAgreementTests`; PCRE2:
/// pcre2pattern(3), compiled with PCRE2_UTF and without PCRE2_UCP):
/// - **Shorthands and properties** are spelled out as their ICU definition restricted to ASCII,
///   so PCRE2's own definitions never come into play: `\s` is ICU's `\p{White_Space}` (its user
///   guide says `[\t\n\f\r\p{Z}]`, but the library matches the vertical tab: the test holds both
///   engines to it), on ASCII `[\t\n\x0B\f\r ]`; `\d` (`\p{Nd}`) and `\p{N}` are `[0-9]` (no
///   other ASCII character is a number); `\w` (`[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u200c\u200d]`)
///   is `[A-Za-z0-9_]`; `\p{L}`, `\p{Lu}`, `\p{Ll}` are `[A-Za-z]`, `[A-Z]`, `[a-z]`; `\p{Z}` is
///   the space.
/// - **`\b`** is kept: both engines put a word boundary where a `\w` character meets a non-`\w`
///   one or either end of the subject, and without PCRE2_UCP PCRE2's `\w` is `[A-Za-z0-9_]`,
///   ICU's on ASCII (ICU also skips combining marks, of which ASCII has none).
/// - **Case-insensitive groups `(?i:…)`**: both engines match an ASCII letter against its other
///   case and against nothing else in ASCII, and both close a class under case (`[A-Z]` matches
///   `a`; ICU does so for `\p{Lu}` as well, which is why properties become classes here). A
///   non-ASCII literal whose full case folding is ASCII (`ß` → `ss`, `ſ` → `s`, `K` → `k`)
///   matches that ASCII text in ICU (full case folding), so it becomes the folding; any other
///   non-ASCII literal can match no ASCII text in either engine and is kept.
/// - Everything else the patterns use — literals, classes, alternation, greedy quantifiers,
///   `(?:…)`, lookahead and single-character lookbehind — is Perl's backtracking semantics in
///   both: leftmost match, first alternative that succeeds.
///
/// Anything else (an unescaped `.`, `^`, `$`, inline flags, back-references, nested or
/// combined ICU sets, other escapes) is refused with an error, not translated by guess.
enum ASCIIPatternTranslation {
    struct Refused: Error, CustomStringConvertible {
        var reason: String
        var description: String { "the pattern cannot be matched by PCRE2 like ICU: \(reason)" }
    }

    /// `pattern` (ICU syntax) as a PCRE2 pattern that matches like it on ASCII subjects.
    static func translate(_ pattern: String) throws(Refused) -> String {
        var reader = Reader(scalars: Array(pattern.unicodeScalars))
        var output = ""
        // One entry per open group: whether it is case-insensitive.
        var caseless: [Bool] = [false]
        while let c = reader.next() {
            switch c {
            case "\\": output += try escape(&reader, inClass: false)
            case "[": output += try characterClass(&reader, caseless: caseless.last ?? false)
            case "(":
                output += "("
                caseless.append(try groupOpening(&reader, &output, caseless: caseless.last ?? false))
            case ")":
                guard caseless.count > 1 else { throw Refused(reason: "unbalanced parenthesis") }
                caseless.removeLast()
                output += ")"
            case ".", "^", "$": throw Refused(reason: "`\(c)` (line semantics differ)")
            default: output += try literal(c, caseless: caseless.last ?? false)
            }
        }
        guard caseless.count == 1 else { throw Refused(reason: "unbalanced parenthesis") }
        return output
    }

    /// After `(`: the group's kind, copied to `output`; returns whether the group is caseless.
    private static func groupOpening(_ reader: inout Reader, _ output: inout String, caseless: Bool) throws(Refused) -> Bool {
        guard reader.peek() == "?" else { return caseless }  // a capturing group
        reader.skip()
        for (opening, isCaseless) in [("i:", true), (":", caseless), ("=", caseless), ("!", caseless), ("<=", caseless), ("<!", caseless)]
        where reader.consume(opening) {
            output += "?" + opening
            return isCaseless
        }
        throw Refused(reason: "a group kind other than (?: (?i: (?= (?! (?<= (?<!")
    }

    /// A character outside a class.
    private static func literal(_ c: Unicode.Scalar, caseless: Bool) throws(Refused) -> String {
        if c.isASCII { return String(c) }
        guard caseless, PatternDetectors.foldsToASCII(c.value) else { return String(c) }
        let folded = String(c).uppercased().lowercased()
        guard folded.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic && $0.isASCII }) else {
            throw Refused(reason: "a caseless non-ASCII letter whose folding is not ASCII letters")
        }
        return "(?:\(folded))"
    }

    /// After `[`: the class, with shorthands spelled out.
    private static func characterClass(_ reader: inout Reader, caseless: Bool) throws(Refused) -> String {
        var output = "["
        if reader.consume("^") { output += "^" }
        var first = true
        while let c = reader.next() {
            switch c {
            case "]":
                guard !first else { throw Refused(reason: "`]` first in a class") }
                return output + "]"
            case "\\": output += try escape(&reader, inClass: true)
            case "[": throw Refused(reason: "a nested set (ICU set syntax)")
            case "-" where reader.peek() == "-", "&" where reader.peek() == "&": throw Refused(reason: "a set operation (ICU set syntax)")
            default:
                if !c.isASCII, caseless, PatternDetectors.foldsToASCII(c.value) {
                    throw Refused(reason: "a caseless class with a non-ASCII letter that folds to ASCII")
                }
                output += String(c)
            }
            first = false
        }
        throw Refused(reason: "an unterminated class")
    }

    /// After `\`: the escape, translated.
    private static func escape(_ reader: inout Reader, inClass: Bool) throws(Refused) -> String {
        guard let e = reader.next() else { throw Refused(reason: "a trailing backslash") }
        func set(_ members: String) -> String { inClass ? members : "[\(members)]" }
        switch e {
        case "s": return set("\\t\\n\\x0B\\f\\r ")
        case "d": return set("0-9")
        case "w": return set("A-Za-z0-9_")
        case "b" where !inClass: return "\\b"
        case "p":
            guard reader.consume("{"), let name = reader.upTo("}") else { throw Refused(reason: "a property without {name}") }
            switch name {
            case "L": return set("A-Za-z")
            case "Lu": return set("A-Z")
            case "Ll": return set("a-z")
            case "N": return set("0-9")
            case "Z": return set(" ")
            default: throw Refused(reason: "the property \\p{\(name)}")
            }
        default:
            // An escaped ASCII punctuation character is that character in both engines.
            guard e.isASCII, e.properties.isPatternSyntax else { throw Refused(reason: "the escape \\\(e)") }
            return "\\" + String(e)
        }
    }

    private struct Reader {
        let scalars: [Unicode.Scalar]
        var position = 0
        mutating func next() -> Unicode.Scalar? {
            guard position < scalars.count else { return nil }
            defer { position += 1 }
            return scalars[position]
        }
        func peek() -> Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }
        mutating func skip() { position += 1 }
        /// Consumes `text` when the pattern continues with it.
        mutating func consume(_ text: String) -> Bool {
            let wanted = Array(text.unicodeScalars)
            guard position + wanted.count <= scalars.count, Array(scalars[position..<position + wanted.count]) == wanted else { return false }
            position += wanted.count
            return true
        }
        /// The scalars up to `end` (consumed with it), or nil when `end` never comes.
        mutating func upTo(_ end: Unicode.Scalar) -> String? {
            guard let stop = scalars[position...].firstIndex(of: end) else { return nil }
            defer { position = stop + 1 }
            return String(String.UnicodeScalarView(scalars[position..<stop]))
        }
    }
}
