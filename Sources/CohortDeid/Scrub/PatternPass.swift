import Foundation

/// The scrubber's first pass: one regular expression over the text (``PatternDetectors``):
/// emails, URLs, MRNs, SSNs, IP addresses, phone numbers, street addresses, ZIP and postcodes,
/// serial numbers, ages over 89 (→ `90 or older`) and dates (shifted by the participant's
/// offset and written in their own format by ``FreeTextDates``, or `[DATE]` for a roster birth
/// date, an ambiguous date, or no offset). A match that is no identifier after all (a score
/// such as 7/10) is looked at again one character on.
///
/// Two engines, one set of patterns: text whose bytes are all ASCII, or whose non-ASCII scalars
/// are all inert (``PCRE2Route``: curly quotes, dashes, symbols, emoji), is matched by PCRE2 on
/// its UTF-8 bytes (``asciiDetectors``, the same alternatives through
/// ``ASCIIPatternTranslation``); text that also holds plain letters (accented and other letters
/// with simple case) by PCRE2 with the letters translation (``letterDetectors``); the two types
/// say why the matches are the same. Any other text goes to ICU's `NSRegularExpression` (case
/// folding, marks, `\w` and `\b` beyond these differ between the two). When PCRE2 gives up on a
/// text (a resource limit), ICU scrubs it as well.
struct PatternPass: Sendable {
    // NSRegularExpression is immutable and documented thread-safe; it is never mutated here.
    let detectors: NSRegularExpression
    /// ``PatternDetectors/alternatives`` for PCRE2, for ASCII text and text whose other scalars
    /// are inert (nil: ICU for all text, the tests' reference).
    var asciiDetectors: PCRE2Expression?
    /// The same for text with plain letters (``PCRE2Route/letters``; nil: ICU for that text).
    var letterDetectors: PCRE2Expression?
    /// The roster's birth dates (``IdentifierIndex/birthDayKeys``), which are never shifted.
    let index: IdentifierIndex

    /// The pass with both engines compiled.
    init(index: IdentifierIndex) throws {
        detectors = try PatternDetectors.compile()
        asciiDetectors = try PatternDetectors.compileASCII()
        letterDetectors = try PatternDetectors.compileASCII(for: .letters)
        self.index = index
    }

    /// `text` with every pattern replaced; adds the replacements to `counts`.
    func apply(_ text: String, counts: inout ScrubCounts, shiftDays: Int?) -> String {
        var attempt = counts
        let ascii = text.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            guard let expression = PCRE2Route.of(bytes).expression(asciiDetectors, letterDetectors) else { return nil }
            return applyPCRE2(text, bytes, expression, counts: &attempt, shiftDays: shiftDays)
        }
        if let ascii, let ascii {
            counts = attempt
            return ascii
        }
        return applyICU(text, counts: &counts, shiftDays: shiftDays)
    }

    /// The first match at or after byte `from` (a scalar boundary) of the text `bytes`, found in the slice
    /// that starts there: NSRegularExpression's `firstMatch(in:range:)` has opaque bounds (a
    /// lookbehind or `\b` at the range's start does not see the text before it), and so does a
    /// PCRE2 subject.
    static func asciiFirstMatch(
        _ expression: PCRE2Expression, _ bytes: UnsafeBufferPointer<UInt8>, from: Int, scratch: PCRE2Expression.Scratch
    ) -> PCRE2Expression.Outcome {
        let slice = UnsafeBufferPointer(rebasing: bytes[from...])
        let outcome = expression.firstMatch(in: slice, from: 0, scratch: scratch)
        guard case .match(var match) = outcome else { return outcome }
        match.start += from
        match.end += from
        return .match(match)
    }

    /// ``apply(_:counts:shiftDays:)`` on PCRE2 for the text `text` (whose UTF-8 bytes are
    /// `bytes`; match offsets are bytes, always at scalar boundaries), or nil when PCRE2 gave up on it. The same steps as ``applyICU(_:counts:shiftDays:)``.
    private func applyPCRE2(
        _ text: String, _ bytes: UnsafeBufferPointer<UInt8>, _ expression: PCRE2Expression, counts: inout ScrubCounts, shiftDays: Int?
    ) -> String? {
        let scratch = PCRE2Expression.Scratch(for: expression)
        var output = ""
        var cursor = text.startIndex
        var changed = false
        var searchFrom = 0
        while searchFrom < bytes.count {
            let outcome = Self.asciiFirstMatch(expression, bytes, from: searchFrom, scratch: scratch)
            if outcome == .failed { return nil }
            guard case .match(let match) = outcome, match.end > match.start else { break }
            let utf8 = text.utf8
            let whole = utf8.index(text.startIndex, offsetBy: match.start)..<utf8.index(text.startIndex, offsetBy: match.end)
            let token = match.group >= 0 ? PatternDetectors.alternatives[match.group].0 : .id
            guard let replacement = replacement(for: token, text[whole], after: text[cursor..<whole.lowerBound], shiftDays: shiftDays) else {
                // Not an identifier after all: look again one character on.
                searchFrom = utf8.distance(from: text.startIndex, to: text.index(after: whole.lowerBound))
                continue
            }
            output += text[cursor..<whole.lowerBound]
            output += replacement
            counts.add(token)
            changed = true
            cursor = whole.upperBound
            searchFrom = match.end
        }
        guard changed else { return text }
        output += text[cursor...]
        return output
    }

    /// ``apply(_:counts:shiftDays:)`` on ICU (any text).
    private func applyICU(_ text: String, counts: inout ScrubCounts, shiftDays: Int?) -> String {
        let utf16Count = text.utf16.count
        var output = ""
        var cursor = text.startIndex
        var changed = false
        var searchFrom = 0
        while searchFrom < utf16Count,
            let match = detectors.firstMatch(in: text, options: [], range: NSRange(location: searchFrom, length: utf16Count - searchFrom))
        {
            guard let whole = PatternDetectors.scalarRange(match.range, in: text), match.range.length > 0 else { break }
            let token = PatternDetectors.token(of: match, in: PatternDetectors.alternatives)
            guard let replacement = replacement(for: token, text[whole], after: text[cursor..<whole.lowerBound], shiftDays: shiftDays) else {
                // Not an identifier after all: look again one character on.
                let next = text.index(after: whole.lowerBound)
                searchFrom = NSRange(next..<next, in: text).location
                continue
            }
            output += text[cursor..<whole.lowerBound]
            output += replacement
            counts.add(token)
            changed = true
            cursor = whole.upperBound
            searchFrom = match.range.location + match.range.length
        }
        guard changed else { return text }
        output += text[cursor...]
        return output
    }

    /// What replaces `matched` (found as `token`, after the text `before`), or nil when it is no
    /// identifier after all.
    func replacement(for token: ScrubToken, _ matched: Substring, after before: Substring, shiftDays: Int?) -> String? {
        switch token {
        case .date:
            return FreeTextDates.replacement(for: matched, before: before, shiftDays: shiftDays, isBirthDate: isBirthDate)
        case .phone:
            return PatternDetectors.isPhone(matched) ? token.text : nil
        case .age:
            // "aged 93" → "aged 90 or older"; "93-year-old", "93 yo" → "90 or older".
            let word = matched.prefix(while: { $0.isLetter || $0 == ":" })
            return word.isEmpty ? token.text : String(word) + " " + token.text
        default:
            return token.text
        }
    }

    private func isBirthDate(_ year: Int, _ month: Int, _ day: Int) -> Bool {
        index.birthDayKeys.contains(IdentifierIndex.dateKey(year: year, monthDay: month * 100 + day))
    }
}

/// The scrubber's second pass: identifiers written without digits — obfuscated emails
/// (`jane dot doe at gmail dot com`, `jane[at]example[dot]com`) and bare domains
/// (`example.com/path`) — by the word detectors of ``PatternDetectors``.
/// Text on PCRE2 or ICU by ``PCRE2Route``, as in ``PatternPass``.
struct WordPatternPass: Sendable {
    // NSRegularExpression is immutable and documented thread-safe; it is never mutated here.
    let detectors: NSRegularExpression
    /// ``PatternDetectors/wordAlternatives`` for PCRE2, for the text ``PatternPass`` gives it
    /// (nil: ICU for all text, the tests' reference).
    var asciiDetectors: PCRE2Expression?
    /// The same for text with plain letters (``PCRE2Route/letters``; nil: ICU for that text).
    var letterDetectors: PCRE2Expression?

    /// The pass with both engines compiled.
    init() throws {
        detectors = try PatternDetectors.compileWordDetectors()
        asciiDetectors = try PatternDetectors.compileASCIIWordDetectors()
        letterDetectors = try PatternDetectors.compileASCIIWordDetectors(for: .letters)
    }

    /// `text` with every match replaced by its token; adds the replacements to `counts`.
    func apply(_ text: String, counts: inout ScrubCounts) -> String {
        var attempt = counts
        let ascii = text.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            guard let expression = PCRE2Route.of(bytes).expression(asciiDetectors, letterDetectors) else { return nil }
            return applyPCRE2(text, bytes, expression, counts: &attempt)
        }
        if let ascii, let ascii {
            counts = attempt
            return ascii
        }
        return applyICU(text, counts: &counts)
    }

    /// Every match in the UTF-8 text `bytes`, as NSRegularExpression's `matches(in:)` finds them
    /// over the whole text: each search starts where the last match ended, in the whole text (a
    /// lookbehind sees what lies before), one scalar on after an empty match (the detectors
    /// match nothing empty; a start inside a scalar would be undefined for PCRE2_NO_UTF_CHECK).
    /// Nil when PCRE2 gave up.
    static func asciiMatches(
        _ expression: PCRE2Expression, _ bytes: UnsafeBufferPointer<UInt8>, scratch: PCRE2Expression.Scratch
    ) -> [PCRE2Expression.Match]? {
        var matches: [PCRE2Expression.Match] = []
        var from = 0
        while from <= bytes.count {
            switch expression.firstMatch(in: bytes, from: from, scratch: scratch) {
            case .none: return matches
            case .failed: return nil
            case .match(let match):
                matches.append(match)
                from = match.end > match.start ? match.end : match.end + 1
                while from < bytes.count, bytes[from] & 0xC0 == 0x80 { from += 1 }
            }
        }
        return matches
    }

    /// ``apply(_:counts:)`` on PCRE2 for the text `text`, or nil when PCRE2 gave up on it.
    private func applyPCRE2(_ text: String, _ bytes: UnsafeBufferPointer<UInt8>, _ expression: PCRE2Expression, counts: inout ScrubCounts) -> String? {
        guard let matches = Self.asciiMatches(expression, bytes, scratch: PCRE2Expression.Scratch(for: expression)) else { return nil }
        guard !matches.isEmpty else { return text }
        var output = ""
        var cursor = text.startIndex
        let utf8 = text.utf8
        for match in matches {
            let whole = utf8.index(text.startIndex, offsetBy: match.start)..<utf8.index(text.startIndex, offsetBy: match.end)
            guard whole.lowerBound >= cursor else { continue }
            let token = match.group >= 0 ? PatternDetectors.wordAlternatives[match.group].0 : .id
            output += text[cursor..<whole.lowerBound]
            output += token.text
            counts.add(token)
            cursor = whole.upperBound
        }
        output += text[cursor...]
        return output
    }

    /// ``apply(_:counts:)`` on ICU (any text).
    private func applyICU(_ text: String, counts: inout ScrubCounts) -> String {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        let matches = detectors.matches(in: text, options: [], range: range)
        guard !matches.isEmpty else { return text }
        var output = ""
        var cursor = text.startIndex
        for match in matches {
            guard let whole = PatternDetectors.scalarRange(match.range, in: text), whole.lowerBound >= cursor else { continue }
            let token = PatternDetectors.token(of: match, in: PatternDetectors.wordAlternatives)
            output += text[cursor..<whole.lowerBound]
            output += token.text
            counts.add(token)
            cursor = whole.upperBound
        }
        output += text[cursor...]
        return output
    }
}

extension PCRE2Route {
    /// The expression of a pass for this route: `ascii` for ``ascii``, `letters` for
    /// ``letters``, none (ICU) for ``icu``.
    func expression(_ ascii: PCRE2Expression?, _ letters: PCRE2Expression?) -> PCRE2Expression? {
        switch self {
        case .ascii: ascii
        case .letters: letters
        case .icu: nil
        }
    }
}

extension PatternDetectors {
    /// `range` (UTF-16 offsets, as ICU reports a match) as a range of `text` at scalar
    /// boundaries, as PCRE2's byte offsets give it; nil only when it splits a scalar. Not
    /// `Range(_:in:)`: that is nil when a bound falls inside a Character (a date followed by a
    /// combining mark or an emoji modifier, `03/14\u{301}`), and the first pass then stopped
    /// scrubbing the text there, leaving that date unshifted.
    static func scalarRange(_ range: NSRange, in text: String) -> Range<String.Index>? {
        let utf16 = text.utf16
        guard range.location != NSNotFound, let lower = utf16.index(utf16.startIndex, offsetBy: range.location, limitedBy: utf16.endIndex),
            let upper = utf16.index(lower, offsetBy: range.length, limitedBy: utf16.endIndex),
            lower.samePosition(in: text.unicodeScalars) != nil, upper.samePosition(in: text.unicodeScalars) != nil
        else { return nil }
        return lower..<upper
    }

    /// The first alternative of `alternatives` whose group took part in `match`.
    static func token(of match: NSTextCheckingResult, in alternatives: [(ScrubToken, String)]) -> ScrubToken {
        for (offset, alternative) in alternatives.enumerated() where match.range(at: offset + 1).location != NSNotFound {
            return alternative.0
        }
        return .id
    }
}
