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

    /// What the subjects hold besides ASCII and inert scalars (``PCRE2Route``).
    enum Scope: Sendable {
        /// Nothing else: `\w`, `\b` and the letter properties are ASCII.
        case ascii
        /// Also the plain letters of ``PCRE2Route/isPlainLetter(_:)`` (``PCRE2Route/letters``):
        /// `\w` becomes ICU's definition restricted to them, `[A-Za-z0-9_\p{L}]` (every letter
        /// is Alphabetic, and PCRE2's Unicode 14 `\p{L}` holds exactly the allowed letters, which
        /// are assigned by Unicode 14); `\b` becomes that class's boundary spelled with
        /// lookarounds, `(?:(?<=W)(?!W)|(?<!W)(?=W))`, which is ICU's `\b` when no scalar is a
        /// mark or Cf (the ones it skips) and the subject's ends count as non-word; `\p{L}`,
        /// `\p{Lu}`, `\p{Ll}` stay properties, refused in a case-insensitive group (ICU closes
        /// them under case, PCRE2 does not); a caseless non-ASCII literal is kept when its case
        /// mappings are single scalars (then ICU's full folding and PCRE2's caseless set match
        /// the same allowed letters), folded to ASCII as before when they hold ASCII, refused
        /// otherwise; `\s`, `\d`, `\p{N}`, `\p{Z}` stay ASCII (no allowed scalar is a space or
        /// a number), and so do caseless ASCII letters (no allowed letter folds to ASCII).
        case letters
    }

    /// `pattern` (ICU syntax) as a PCRE2 pattern that matches like it on subjects of `scope`.
    static func translate(_ pattern: String, for scope: Scope = .ascii) throws(Refused) -> String {
        var reader = Reader(scalars: Array(pattern.unicodeScalars))
        var output = ""
        // One entry per open group: whether it is case-insensitive.
        var caseless: [Bool] = [false]
        while let c = reader.next() {
            switch c {
            case "\\": output += try escape(&reader, inClass: false, caseless: caseless.last ?? false, scope: scope)
            case "[": output += try characterClass(&reader, caseless: caseless.last ?? false, scope: scope)
            case "(":
                output += "("
                caseless.append(try groupOpening(&reader, &output, caseless: caseless.last ?? false))
            case ")":
                guard caseless.count > 1 else { throw Refused(reason: "unbalanced parenthesis") }
                caseless.removeLast()
                output += ")"
            case ".", "^", "$": throw Refused(reason: "`\(c)` (line semantics differ)")
            default: output += try literal(c, caseless: caseless.last ?? false, scope: scope)
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
    private static func literal(_ c: Unicode.Scalar, caseless: Bool, scope: Scope) throws(Refused) -> String {
        if c.isASCII || !caseless { return String(c) }
        guard PatternDetectors.foldsToASCII(c.value) else {
            guard scope == .ascii || PCRE2Route.hasSingleScalarCases(c) else { throw Refused(reason: "a caseless letter with a multi-scalar case mapping") }
            return String(c)
        }
        let folded = String(c).uppercased().lowercased()
        guard folded.unicodeScalars.allSatisfy({ $0.properties.isAlphabetic && $0.isASCII }) else {
            throw Refused(reason: "a caseless non-ASCII letter whose folding is not ASCII letters")
        }
        return "(?:\(folded))"
    }

    /// After `[`: the class, with shorthands spelled out.
    private static func characterClass(_ reader: inout Reader, caseless: Bool, scope: Scope) throws(Refused) -> String {
        var output = "["
        if reader.consume("^") { output += "^" }
        var first = true
        while let c = reader.next() {
            switch c {
            case "]":
                guard !first else { throw Refused(reason: "`]` first in a class") }
                return output + "]"
            case "\\": output += try escape(&reader, inClass: true, caseless: caseless, scope: scope)
            case "[": throw Refused(reason: "a nested set (ICU set syntax)")
            case "-" where reader.peek() == "-", "&" where reader.peek() == "&": throw Refused(reason: "a set operation (ICU set syntax)")
            default:
                if !c.isASCII, caseless, PatternDetectors.foldsToASCII(c.value) || (scope == .letters && c.properties.isCased) {
                    throw Refused(reason: "a caseless class with a non-ASCII letter that folds to ASCII or, beyond ASCII, has a case")
                }
                output += String(c)
            }
            first = false
        }
        throw Refused(reason: "an unterminated class")
    }

    /// After `\`: the escape, translated.
    private static func escape(_ reader: inout Reader, inClass: Bool, caseless: Bool, scope: Scope) throws(Refused) -> String {
        guard let e = reader.next() else { throw Refused(reason: "a trailing backslash") }
        func set(_ members: String) -> String { inClass ? members : "[\(members)]" }
        let letters = scope == .letters
        if letters, caseless, e == "w" || e == "p" { throw Refused(reason: "a letter class in a caseless group (ICU closes it under case)") }
        let word = letters ? "A-Za-z0-9_\\p{L}" : "A-Za-z0-9_"
        switch e {
        case "s": return set("\\t\\n\\x0B\\f\\r ")
        case "d": return set("0-9")
        case "w": return set(word)
        case "b" where !inClass: return letters ? "(?:(?<=[\(word)])(?![\(word)])|(?<![\(word)])(?=[\(word)]))" : "\\b"
        case "p":
            guard reader.consume("{"), let name = reader.upTo("}") else { throw Refused(reason: "a property without {name}") }
            switch name {
            case "L": return set(letters ? "\\p{L}" : "A-Za-z")
            case "Lu": return set(letters ? "\\p{Lu}" : "A-Z")
            case "Ll": return set(letters ? "\\p{Ll}" : "a-z")
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
