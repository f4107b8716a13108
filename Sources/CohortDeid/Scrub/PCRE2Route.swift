/// Which engine matches the scrubber's patterns on a text: PCRE2 when the two engines provably
/// find the same matches on it, ICU's `NSRegularExpression` (the engine the patterns were written
/// for) otherwise. Decided by the text's scalars alone, against an allow-list derived from the
/// engines' definitions — not from a list of texts that happened to agree.
///
/// **Inert scalars** (``isInert(_:)``) take the ASCII translation (``ASCIIPatternTranslation``)
/// unchanged: punctuation and symbols (general categories P* except Pc, and S*) that are not
/// Alphabetic, not White_Space, not Grapheme_Extend, and have no case mapping or folding — curly
/// quotes, dashes, the ellipsis, bullets, the degree sign, arrows, most emoji. On such a scalar
/// every construct the translated patterns use behaves the same in both engines:
/// - it is no `\w` in either: ICU's `\w` is `[\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\u200c\u200d]` (none
///   of which it is), PCRE2's without PCRE2_UCP is `[A-Za-z0-9_]`; no `\s` (not White_Space), no
///   `\d` or `\p{N}` (not N), no `\p{L}`/`\p{Z}` — and the translation spells all of these as
///   ASCII sets, which it is not in either;
/// - `\b` therefore sees a non-word character on it in both, and ICU's `\b`, which skips
///   Grapheme_Extend and Cf characters to find the character before, never skips it;
/// - it matches no literal but itself, also in a case-insensitive group: it has no case mapping
///   or folding, so ICU's full folding leaves it alone and it is in no PCRE2 caseless set (those
///   hold only characters with a case mapping);
/// - a negated class (`[^\s<>"']`) and a one-character lookbehind see it as one character in
///   both (PCRE2_UTF matches code points, ICU matches code points of the UTF-16 text, a
///   supplementary-plane symbol included).
/// Marks, Cf (`\u200c`, `\u200d` are ICU word characters and ICU's `\b` skips Cf), non-ASCII
/// digits, spaces and letters are not inert, nor are the symbols that join a neighbour in one
/// Character (emoji modifiers, regional indicators: ``standsAlone(_:)``); a text with one goes
/// to ICU.
///
/// **Plain letters** (``isPlainLetter(_:)``) take the letters translation
/// (``ASCIIPatternTranslation/Scope/letters``, which says construct by construct why): letters
/// (L*) assigned by Unicode 14 (PCRE2 10.42's tables; ICU 76 has Unicode 16), not
/// Grapheme_Extend, whose case mappings — and their partners' — are single scalars without ASCII
/// (no `ß`, `ẞ`, `ŉ`, `İ`, `ı`, `ſ`, the Kelvin sign, ligatures: ICU's full case folding would
/// match those against several characters or against an ASCII letter, PCRE2's simple folding
/// would not), and that stand alone as a Character.
///
/// `PatternEngineUnicodeTests` hold every allowed scalar to this against both engines.
enum PCRE2Route: Equatable, Sendable {
    /// PCRE2 with the ASCII translation: every non-ASCII scalar (if any) is inert.
    case ascii
    /// PCRE2 with the letters translation: plain letters, and perhaps inert scalars.
    case letters
    /// ICU: a scalar outside the allow-list.
    case icu

    /// The route for the UTF-8 text `bytes` (a Swift string's, so valid UTF-8).
    static func of(_ bytes: UnsafeBufferPointer<UInt8>) -> PCRE2Route {
        var route = PCRE2Route.ascii
        var i = 0
        let n = bytes.count
        while i < n {
            let lead = bytes[i]
            if lead < 0x80 {
                i += 1
                continue
            }
            let (value, length) = decode(bytes, at: i, lead: lead)
            switch scalarClass(value) {
            case .inert: break
            case .letter: route = .letters
            case .other: return .icu
            }
            i += length
        }
        return route
    }

    /// The scalar value and length of the multi-byte UTF-8 sequence at `i` (whose first byte is
    /// `lead`).
    @inline(__always)
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int, lead: UInt8) -> (UInt32, Int) {
        let length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2
        var value = UInt32(lead) & (length == 2 ? 0x1F : length == 3 ? 0x0F : 0x07)
        for k in 1..<length { value = value << 6 | (UInt32(bytes[i + k]) & 0x3F) }
        return (value, length)
    }

    /// What a non-ASCII scalar is to the route.
    enum ScalarClass: UInt8 {
        case other, inert, letter
    }

    /// The class of the scalar `value` (see the type's comment).
    static func scalarClass(_ value: UInt32) -> ScalarClass {
        if value < 0x800 { return ScalarClass(rawValue: classesBelow800[Int(value)]) ?? .other }
        return Unicode.Scalar(value).map(computeClass) ?? .other
    }

    /// Whether the scalar `value` is in the inert set.
    static func isInert(_ value: UInt32) -> Bool { scalarClass(value) == .inert }

    /// ``scalarClass(_:)`` for the scalars of two UTF-8 bytes and fewer (Latin, Greek, Cyrillic,
    /// Hebrew, Arabic: the letters of nearly all non-ASCII notes), one byte each, computed once
    /// (a few milliseconds; the whole Basic Multilingual Plane would take 0.1-0.2 s of CPU at
    /// every start). Rarer scalars are classified where they occur, about a microsecond each.
    private static let classesBelow800: [UInt8] = (0..<0x800).map { v in Unicode.Scalar(UInt32(v)).map { computeClass($0).rawValue } ?? 0 }

    static func computeClass(_ scalar: Unicode.Scalar) -> ScalarClass {
        computeIsInert(scalar) ? .inert : isPlainLetter(scalar) ? .letter : .other
    }

    /// The plain letters' definition (see the type's comment).
    static func isPlainLetter(_ scalar: Unicode.Scalar) -> Bool {
        let p = scalar.properties
        switch p.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter: break
        default: return false
        }
        guard let age = p.age, age <= (14, 0), !scalar.isASCII, !p.isGraphemeExtend else { return false }
        // (A letter without a case mapping folds to nothing ASCII: skip building its mappings.)
        let caseless = !p.changesWhenCaseMapped
        return (caseless || (!PatternDetectors.foldsToASCII(scalar.value) && hasSingleScalarCases(scalar))) && standsAlone(scalar)
    }

    /// Whether the full lowercase, uppercase and titlecase mappings of `scalar`, and those of
    /// each scalar it maps to, are one scalar each, none of them ASCII (`ẞ` maps to `ß`, whose
    /// uppercase is `SS`: ICU folds `ẞ` to `ss`).
    static func hasSingleScalarCases(_ scalar: Unicode.Scalar) -> Bool {
        func mappings(_ s: Unicode.Scalar) -> [String] {
            [s.properties.lowercaseMapping, s.properties.uppercaseMapping, s.properties.titlecaseMapping]
        }
        // Without a case mapping every mapping is the scalar itself.
        if !scalar.properties.changesWhenCaseMapped { return true }
        for mapping in mappings(scalar) {
            guard mapping.unicodeScalars.count == 1, let partner = mapping.unicodeScalars.first, !partner.isASCII || scalar.isASCII else { return false }
            guard mappings(partner).allSatisfy({ $0.unicodeScalars.count == 1 && !PatternDetectors.foldsToASCII($0.unicodeScalars.first?.value ?? 0) }) else { return false }
        }
        return true
    }

    /// The inert set's definition, from the scalar's Unicode properties.
    static func computeIsInert(_ scalar: Unicode.Scalar) -> Bool {
        guard !scalar.isASCII else { return false }
        let p = scalar.properties
        switch p.generalCategory {
        case .dashPunctuation, .openPunctuation, .closePunctuation, .initialPunctuation, .finalPunctuation, .otherPunctuation,
            .mathSymbol, .currencySymbol, .modifierSymbol, .otherSymbol:
            break
        default:
            return false  // letters, marks, numbers, separators, Pc, Cc, Cf, Cs, Co, Cn
        }
        return !p.isAlphabetic && !p.isWhitespace && !p.isGraphemeExtend && !p.isCased && !p.changesWhenCaseMapped
            && !p.changesWhenCaseFolded && standsAlone(scalar)
    }

    /// Whether `scalar` is a Character of its own next to any scalar the route lets through:
    /// not an emoji modifier (which extends the character before it), a regional indicator (a
    /// flag is two), a Hangul jamo, a prepended or spacing letter. With every scalar standing
    /// alone (and CR LF, whose halves no match separates: no pattern ends or starts with a
    /// space), every match boundary is a Character boundary. The differential tests found the
    /// routes parting at such scalars while ICU's matches were turned into ranges by
    /// `Range(_:in:)` (since fixed: ``PatternDetectors/scalarRange(_:in:)``); the allow-list keeps
    /// them out rather than be widened without tests of its own.
    static func standsAlone(_ scalar: Unicode.Scalar) -> Bool {
        let alone = String(scalar)
        return ("a" + alone).count == 2 && (alone + "a").count == 2 && (alone + alone).count == 2
    }
}
