public import CohortCore
import Foundation

/// Replaces identifiers in free text with typed tokens (`[NAME]`, `[PHONE]`…).
///
/// Built once from the roster: every participant's names (full names; first, middle and last
/// names alone when 3+ letters; common nicknames of first names when capitalized), emails,
/// phone digits in any formatting, MRNs, study codes, street address and city, ZIP, written-out
/// birth dates and device names. Pattern detectors add emails (also in angle brackets), URLs,
/// MRN-like ids, SSNs, IPv4/IPv6, dates, phone numbers, street addresses and code-like ids for
/// identifiers of people not on the roster.
///
/// Matching is case-, accent- and apostrophe-insensitive (`José` = `Jose`, `O’Brien` =
/// `O'Brien` = `OBrien`); hyphenated names match as a whole and by part. A possessive keeps its
/// `'s` (`[NAME]'s`), except before a device word, where the whole phrase becomes `[DEVICE]`
/// (`Jane's Apple Watch` → `[DEVICE]`). One regular-expression pass (skipped for text that
/// none of its alternatives can match, see ``PatternDetectors/needsRegex(_:)``) plus one word
/// pass with hash lookups: the cost does not grow with the roster.
public struct Scrubber: @unchecked Sendable {
    // NSRegularExpression is immutable and documented thread-safe; it is never mutated here.
    private let detectors: NSRegularExpression
    private let index: IdentifierIndex

    /// Words that make `X's …` a device name.
    static let deviceWords: Set<String> = [
        "iphone", "ipad", "ipod", "watch", "applewatch", "apple", "fitbit", "garmin", "galaxy", "pixel", "oura", "ring", "whoop",
        "phone", "macbook", "laptop", "kindle", "polar", "withings", "samsung", "huawei", "xiaomi", "amazfit", "tablet", "android",
        "smartwatch", "tracker", "band", "charge", "versa", "sense", "forerunner", "fenix", "venu", "scale", "monitor", "cgm",
        "dexcom", "libre",
    ]

    /// A scrubber for the identifiers of everyone on `roster` (participants without a
    /// decrypted identity contribute only their study code).
    public init(roster: [Participant]) throws {
        do {
            detectors = try PatternDetectors.compile()
        } catch {
            throw CohortError(.system, "the free-text detectors could not be compiled", underlying: String(describing: error))
        }
        index = IdentifierIndex(roster: roster, mode: .scrubber)
    }

    /// `text` with every identifier replaced by its token.
    public func scrub(_ text: String) -> String {
        var counts = ScrubCounts()
        return scrub(text, counts: &counts)
    }

    /// `text` with every identifier replaced by its token; adds the replacements to `counts`.
    public func scrub(_ text: String, counts: inout ScrubCounts) -> String {
        if text.isEmpty { return text }
        var current = text
        if PatternDetectors.needsRegex(text) { current = applyDetectors(text, counts: &counts) }
        guard rosterMayApply(current) else { return current }
        return applyRoster(current, counts: &counts)
    }

    /// ``scrub(_:counts:)`` without the two shortcuts (the ASCII pre-check before the regular
    /// expression, the roster pre-check): the reference the tests hold the shortcuts to.
    func scrubWithoutShortcuts(_ text: String, counts: inout ScrubCounts) -> String {
        if text.isEmpty { return text }
        var current = text
        if PatternDetectors.mayMatch(text) { current = applyDetectors(text, counts: &counts) }
        return applyRoster(current, counts: &counts)
    }

    /// Whether the roster pass can change `text`: it holds a roster phone number or birth date,
    /// a roster phrase, or a possessive word before a device word. Without
    /// any, the pass finds no span and returns the text as it is, so it is skipped.
    private func rosterMayApply(_ text: String) -> Bool {
        var workspace = LineWorkspace(capacity: text.utf8.count)
        workspace.load(text)
        let scalars = workspace.scalars
        return scalars.withUnsafeBufferPointer { s in
            let numeric = index.numericKinds(s, groups: &workspace.groups)
            if numeric.phone || numeric.birthDate { return true }
            TextTokenizer.tokenize(s, into: &workspace)
            // With no phrase match when nothing is skipped, none can appear when typed tokens
            // and numbers are skipped either (skipping only removes starting points).
            var matched = false
            index.matches(scalars: s, workspace: workspace, skip: { _ in false }) { _ in matched = true }
            if matched { return true }
            for t in 0..<max(workspace.tokenCount - 1, 0) where workspace.tokens[t].isPossessive {
                if Self.deviceWords.contains(workspace.keyString(workspace.tokens[t + 1])) { return true }
            }
            return false
        }
    }

    private func applyDetectors(_ text: String, counts: inout ScrubCounts) -> String {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        let matches = detectors.matches(in: text, options: [], range: range)
        guard !matches.isEmpty else { return text }
        var output = ""
        output.reserveCapacity(text.utf8.count)
        var cursor = text.startIndex
        for match in matches {
            guard let whole = Range(match.range, in: text), whole.lowerBound >= cursor else { continue }
            var token = ScrubToken.id
            for (offset, alternative) in PatternDetectors.alternatives.enumerated() {
                let group = match.range(at: offset + 1)
                if group.location != NSNotFound {
                    token = alternative.0
                    break
                }
            }
            output += text[cursor..<whole.lowerBound]
            output += token.text
            counts.add(token)
            cursor = whole.upperBound
        }
        output += text[cursor...]
        return output
    }

    private struct Span {
        var start: Int
        var end: Int
        var token: ScrubToken
        /// Scalars kept after the token (a possessive `'s`).
        var suffix: Range<Int>?
        var firstToken: Int
        var lastToken: Int
    }

    private func applyRoster(_ text: String, counts: inout ScrubCounts) -> String {
        let scalars = Array(text.unicodeScalars)
        var spans: [Span] = []
        let birthDateRanges = index.birthDateRanges(in: scalars)
        let phones = index.phoneRanges(in: scalars) + birthDateRanges
        let tokens = TextTokenizer.tokens(scalars)
        func inNumericRange(_ t: Int) -> Bool {
            let token = tokens[t]
            return phones.contains { $0.overlaps(token.start..<token.end) }
        }
        func isMarker(_ t: Int) -> Bool {
            let token = tokens[t]
            return token.start > 0 && scalars[token.start - 1] == "[" && token.end < scalars.count && scalars[token.end] == "]"
                && ScrubToken(rawValue: String(String.UnicodeScalarView(scalars[token.start..<token.end]))) != nil
        }
        for range in phones {
            let isDate = birthDateRanges.contains(range)
            spans.append(Span(start: range.lowerBound, end: range.upperBound, token: isDate ? .date : .phone, suffix: nil, firstToken: -1, lastToken: -1))
        }
        let matches = index.matches(in: scalars, tokens: tokens, skip: { inNumericRange($0) || isMarker($0) })
        var tokenSpan = [Int?](repeating: nil, count: tokens.count)
        var wordSpans: [Span] = matches.map { m in
            let last = tokens[m.lastToken]
            let token = ScrubToken(m.kind)
            let suffix: Range<Int>? = token == .name && last.isPossessive ? last.coreEnd..<last.end : nil
            return Span(
                start: tokens[m.firstToken].start, end: token == .name ? last.coreEnd : last.end, token: token, suffix: suffix,
                firstToken: m.firstToken, lastToken: m.lastToken)
        }
        for (i, span) in wordSpans.enumerated() {
            for t in span.firstToken...span.lastToken { tokenSpan[t] = i }
        }

        // A capitalized word between two name matches is a nickname: Katherine "Kit" O'Brien.
        if tokens.count >= 3 {
            for t in 1..<(tokens.count - 1) where tokenSpan[t] == nil && tokens[t].isCapitalized && tokens[t].letterCount >= 2 {
                guard let before = tokenSpan[t - 1], let after = tokenSpan[t + 1], wordSpans[before].token == .name,
                    wordSpans[after].token == .name, !isMarker(t),
                    TextTokenizer.isPhraseGap(scalars, from: tokens[t - 1].end, to: tokens[t].start),
                    TextTokenizer.isPhraseGap(scalars, from: tokens[t].end, to: tokens[t + 1].start)
                else { continue }
                wordSpans.append(Span(start: tokens[t].start, end: tokens[t].coreEnd, token: .name, suffix: nil, firstToken: t, lastToken: t))
                tokenSpan[t] = wordSpans.count - 1
            }
        }

        // "Jane's Apple Watch": a possessive name (or capitalized word) before a device word.
        var t = 0
        while t + 1 < tokens.count {
            let owner = tokens[t]
            let ownerSpan = tokenSpan[t].map { wordSpans[$0] }
            let isNameOwner = ownerSpan.map { $0.token == .name && $0.lastToken == t } ?? false
            guard owner.isPossessive, isNameOwner || (ownerSpan == nil && owner.isCapitalized && !isMarker(t)),
                Self.deviceWords.contains(tokens[t + 1].key), tokenSpan[t + 1] == nil,
                TextTokenizer.isPhraseGap(scalars, from: owner.end, to: tokens[t + 1].start)
            else {
                t += 1
                continue
            }
            var last = t + 1
            while last + 1 < tokens.count, last - t < 5, tokenSpan[last + 1] == nil,
                TextTokenizer.isPhraseGap(scalars, from: tokens[last].end, to: tokens[last + 1].start),
                Self.deviceWords.contains(tokens[last + 1].key) || tokens[last + 1].isCapitalized
                    || tokens[last + 1].letterCount == 0
            {
                last += 1
            }
            let first = ownerSpan?.firstToken ?? t
            if let index = tokenSpan[t] { wordSpans[index].token = .id; wordSpans[index].end = -1 }  // superseded
            wordSpans.append(Span(start: tokens[first].start, end: tokens[last].end, token: .device, suffix: nil, firstToken: first, lastToken: last))
            for k in first...last { tokenSpan[k] = wordSpans.count - 1 }
            t = last + 1
        }

        spans += wordSpans.filter { $0.end >= 0 }
        guard !spans.isEmpty else { return text }
        spans.sort { $0.start < $1.start }
        var output = String.UnicodeScalarView()
        var cursor = 0
        for span in spans where span.start >= cursor {
            output.append(contentsOf: scalars[cursor..<span.start])
            output.append(contentsOf: span.token.text.unicodeScalars)
            counts.add(span.token)
            if let suffix = span.suffix {
                output.append(contentsOf: scalars[suffix])
                cursor = suffix.upperBound
            } else {
                cursor = span.end
            }
        }
        output.append(contentsOf: scalars[cursor...])
        return String(output)
    }
}
