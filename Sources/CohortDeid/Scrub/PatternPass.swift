import Foundation

/// The scrubber's first pass: one regular expression over the text (``PatternDetectors``):
/// emails, URLs, MRNs, SSNs, IP addresses, phone numbers, street addresses, ZIP and postcodes,
/// serial numbers, ages over 89 (→ `90 or older`) and dates (shifted by the participant's
/// offset and written in their own format by ``FreeTextDates``, or `[DATE]` for a roster birth
/// date, an ambiguous date, or no offset). A match that is no identifier after all (a score
/// such as 7/10) is looked at again one character on.
struct PatternPass: Sendable {
    // NSRegularExpression is immutable and documented thread-safe; it is never mutated here.
    let detectors: NSRegularExpression
    /// The roster's birth dates (``IdentifierIndex/birthDayKeys``), which are never shifted.
    let index: IdentifierIndex

    /// `text` with every pattern replaced; adds the replacements to `counts`.
    func apply(_ text: String, counts: inout ScrubCounts, shiftDays: Int?) -> String {
        let utf16Count = text.utf16.count
        var output = ""
        var cursor = text.startIndex
        var changed = false
        var searchFrom = 0
        while searchFrom < utf16Count,
            let match = detectors.firstMatch(in: text, options: [], range: NSRange(location: searchFrom, length: utf16Count - searchFrom))
        {
            guard let whole = Range(match.range, in: text), match.range.length > 0 else { break }
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
struct WordPatternPass: Sendable {
    // NSRegularExpression is immutable and documented thread-safe; it is never mutated here.
    let detectors: NSRegularExpression

    /// `text` with every match replaced by its token; adds the replacements to `counts`.
    func apply(_ text: String, counts: inout ScrubCounts) -> String {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        let matches = detectors.matches(in: text, options: [], range: range)
        guard !matches.isEmpty else { return text }
        var output = ""
        var cursor = text.startIndex
        for match in matches {
            guard let whole = Range(match.range, in: text), whole.lowerBound >= cursor else { continue }
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

extension PatternDetectors {
    /// The first alternative of `alternatives` whose group took part in `match`.
    static func token(of match: NSTextCheckingResult, in alternatives: [(ScrubToken, String)]) -> ScrubToken {
        for (offset, alternative) in alternatives.enumerated() where match.range(at: offset + 1).location != NSNotFound {
            return alternative.0
        }
        return .id
    }
}
