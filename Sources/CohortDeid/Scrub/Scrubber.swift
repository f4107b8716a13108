package import CohortCore
import Foundation

/// Replaces identifiers in free text with typed tokens (`[NAME]`, `[PHONE]`…) and shifts the
/// dates in it.
///
/// Three passes, each skipped for text it cannot change:
///
/// 1. **Patterns** (one regular expression, see ``PatternDetectors``): emails, URLs, MRNs,
///    SSNs, IP addresses, phone numbers of US/CA, UK, DE, FR, IN and AU in national and
///    international form (with extensions), street addresses, PO boxes, ZIP and postcodes next
///    to a state or city, device serial numbers, ages over 89 (→ `90 or older`) and dates. A
///    date is shifted by the participant's offset and written back in its own format (see
///    ``FreeTextDates``), or replaced by `[DATE]` when it is a birth date, ambiguous, or no
///    offset is given.
/// 2. **Words without digits**: obfuscated emails (`jane dot doe at gmail dot com`,
///    `jane[at]example[dot]com`) and bare domains (`example.com/path`).
/// 3. **The roster and people** (word pass, hash lookups; the cost does not grow with the
///    roster): every identifier of every participant — full name in any order, each name word,
///    initials with the surname (`J. Doe`), nicknames both ways (``Nicknames``), emails, phone
///    digits in any formatting, MRNs (with or without prefix), study codes, address, city, ZIP,
///    birth dates, device names — in any case, accents and apostrophes folded, possessive kept
///    (`[NAME]'s`), words of a name split across a line break. Then people who are not on the
///    roster: a capitalized given name from ``FirstNames``, a capitalized word after a relation
///    (`my daughter Emma`) or a title (`Dr. Okafor`), and the capitalized word after such a
///    name (its surname).
///
/// **When a word is a name.** A roster name word that is also ordinary or clinical vocabulary
/// (``ClinicalVocabulary``: Hope, Field, Mark, May, Parkinson…) is replaced alone only where
/// the text says "person": it is capitalized and next to another name part, after a title or a
/// relation word, after "with"/"told"/"met"…, before "said"/"called"/"texted"…, or possessive
/// (`Hope's`) but not before a disease word (`Parkinson's disease`). In a multi-word roster
/// phrase ("Hope Field", "H. Field") it is always replaced: a roster name always wins. Every
/// other roster name word is replaced in any case, anywhere.
public struct Scrubber: Sendable {
    // NSRegularExpression is immutable and documented thread-safe; it is never mutated here.
    private let detectors: NSRegularExpression
    private let wordDetectors: NSRegularExpression
    let index: IdentifierIndex
    /// The words free text may keep (the allow-list).
    public private(set) var vocabulary: SafeVocabulary

    /// Words that make `X's …` a device name.
    static let deviceWords: Set<String> = [
        "iphone", "ipad", "ipod", "watch", "applewatch", "apple", "fitbit", "garmin", "galaxy", "pixel", "oura", "ring", "whoop",
        "phone", "macbook", "laptop", "kindle", "polar", "withings", "samsung", "huawei", "xiaomi", "amazfit", "tablet", "android",
        "smartwatch", "tracker", "band", "charge", "versa", "sense", "forerunner", "fenix", "venu", "scale", "monitor", "cgm",
        "dexcom", "libre",
    ]

    /// Words before a name that say "person": titles and relations.
    static let abbreviatedTitles: Set<String> = ["mr", "mrs", "ms", "mx", "dr", "prof", "rev"]
    static let titles: Set<String> = ["mr", "mrs", "ms", "miss", "mx", "dr", "prof", "professor", "nurse", "coach", "pastor", "rev"]
    static let relations: Set<String> = [
        "daughter", "son", "wife", "husband", "sister", "brother", "mother", "mom", "mum", "mommy", "mummy", "dad", "father",
        "daddy", "friend", "partner", "boyfriend", "girlfriend", "fiance", "fiancee", "aunt", "auntie", "uncle", "cousin",
        "niece", "nephew", "grandson", "granddaughter", "grandma", "grandpa", "grandmother", "grandfather", "granny", "nana",
        "neighbor", "neighbour", "colleague", "coworker", "boss", "roommate", "flatmate", "caregiver", "carer", "nanny",
        "stepson", "stepdaughter", "stepmom", "stepdad", "sibling", "twin", "spouse", "named", "called", "kids", "kid", "child",
        "baby", "granddad", "grandad", "bestie", "buddy", "pal", "therapist", "physio",
    ]
    /// Words before a name that say "person" when the name is not a month or weekday.
    static let interactions: Set<String> = [
        "with", "told", "asked", "called", "texted", "met", "visited", "saw", "phoned", "emailed", "messaged", "thanked",
        "hugged", "dear", "hi", "hello", "thanks", "love",
    ]
    /// Words after a name that say "person".
    static let personVerbs: Set<String> = [
        "said", "says", "told", "tells", "called", "calls", "asked", "asks", "texted", "visited", "came", "comes", "drove",
        "helped", "helps", "thinks", "thought", "wants", "wanted", "noticed", "mentioned", "brought", "picked", "insisted",
        "suggested", "reminded", "worries", "worried", "laughed", "cried", "stayed", "phoned", "emailed", "messaged",
    ]
    /// Hashes (``TextTokenizer/hashKeyPadded(_:_:)``) of the given names that are not vocabulary, and
    /// of the titles and relation words, for the roster pre-check.
    static let givenNameHashes: Set<UInt64> = Set(
        FirstNames.names.filter(FirstNames.isUnambiguousName).map { TextTokenizer.hash(asciiKey: Array($0.utf8)) })
    static let personWordHashes: Set<UInt64> = Set(titles.union(relations).map { TextTokenizer.hash(asciiKey: Array($0.utf8)) })

    /// Words before a number that make it a measurement (`Step count 30359`).
    static let measurementWords: Set<String> = ["count", "total", "score", "walked", "steps", "reading", "level", "rate", "value"]

    /// Words before a name that address or sign: "call X", "Signed, X", "Note from X:".
    static let callWords: Set<String> = ["call", "ask", "signed", "sincerely", "regards", "cheers"]
    /// Sign-off words before a name that ends its line or the text ("Thanks, X").
    static let signOffs: Set<String> = ["thanks", "thank", "cheers", "love", "regards", "best", "signed", "sincerely", "yours", "xo", "xx", "from"]
    /// Words after a name that opens a sentence and says "the writer": "X here", "X again".
    static let selfReferences: Set<String> = ["here", "again", "writing", "speaking", "checking", "reporting", "typing"]
    /// Words before a city: "delivers to X", "moved to X", "lives in X".
    static let placeWords: Set<String> = ["in", "near", "to", "visiting", "address", "from", "outside", "around"]
    /// "my new place is X", "home is X".
    static let homeWords: Set<String> = ["place", "home", "city", "town", "address", "hometown"]

    /// Words after a possessive eponym: `Parkinson's disease` is no person.
    static let eponymHeads: Set<String> = [
        "disease", "syndrome", "sign", "test", "tendon", "tendonitis", "phenomenon", "palsy", "maneuver", "manoeuvre", "reflex",
        "fracture", "node", "nodes", "ulcer", "law", "triad", "lymphoma", "sarcoma", "tumor", "tumour", "cyst", "scale", "score",
        "index", "criteria", "procedure", "operation", "position", "classification", "stage", "contracture", "arthritis",
        "ataxia", "chorea", "disorder", "dementia", "thyroiditis", "angina", "neuroma", "neuralgia", "phenomena", "nodule",
        "nodules", "lines", "line", "point", "points", "space", "area", "method", "technique",
    ]

    /// A scrubber for the identifiers of everyone on `roster` (participants without a
    /// decrypted identity contribute only their study code), keeping the words of
    /// ``SafeVocabulary/system()``.
    package init(roster: [Participant]) throws {
        try self.init(identifiers: RosterIdentifiers(for: .scrubber, roster: roster))
    }

    /// A scrubber for the identifiers of everyone on `roster` that keeps the words of `vocabulary`.
    package init(roster: [Participant], vocabulary: SafeVocabulary) throws {
        try self.init(identifiers: RosterIdentifiers(for: .scrubber, roster: roster), vocabulary: vocabulary)
    }

    /// A scrubber for the identifiers collected in `identifiers` (for `.scrubber`), keeping the
    /// words of ``SafeVocabulary/system()``; throws when the word lists are not installed.
    package init(identifiers: consuming RosterIdentifiers) throws {
        try self.init(identifiers: identifiers, vocabulary: SafeVocabulary.system())
    }

    /// A scrubber for the identifiers collected in `identifiers` that keeps the words of
    /// `vocabulary`.
    package init(identifiers: consuming RosterIdentifiers, vocabulary: SafeVocabulary) throws {
        self.vocabulary = vocabulary
        do {
            detectors = try PatternDetectors.compile()
            wordDetectors = try PatternDetectors.compileWordDetectors()
        } catch {
            throw CohortError(.system, "the free-text detectors could not be compiled", underlying: String(describing: error))
        }
        index = identifiers.compiled(for: .scrubber)
    }

    /// This scrubber, also keeping `words` (the protocol's kinds, units, medication names).
    package func keeping(_ words: some Sequence<String>) -> Scrubber {
        var copy = self
        copy.vocabulary = vocabulary.adding(words)
        return copy
    }

    /// `text` with every identifier replaced by its token (dates replaced by `[DATE]`).
    package func scrub(_ text: String) -> String {
        var counts = ScrubCounts()
        return scrub(text, counts: &counts, shiftDays: nil)
    }

    /// `text` with every identifier replaced by its token (dates replaced by `[DATE]`); adds
    /// the replacements to `counts`.
    package func scrub(_ text: String, counts: inout ScrubCounts) -> String {
        scrub(text, counts: &counts, shiftDays: nil)
    }

    /// `text` with every identifier replaced by its token and every date moved by `shiftDays`
    /// (the participant's date-shift offset for this recipient) and written in its own format;
    /// with `shiftDays` nil, dates are replaced by `[DATE]`. Adds the replacements (shifted dates
    /// under `DATE`) to `counts`.
    package func scrub(_ text: String, counts: inout ScrubCounts, shiftDays: Int?) -> String {
        if text.isEmpty { return text }
        var current = text
        if PatternDetectors.needsRegex(text) { current = applyDetectors(text, counts: &counts, shiftDays: shiftDays) }
        if PatternDetectors.wordDetectorsMayMatch(current) { current = applyWordDetectors(current, counts: &counts) }
        if rosterMayApply(current) { current = applyRoster(current, counts: &counts) }
        return applyAllowList(current, counts: &counts)
    }

    /// ``scrub(_:counts:shiftDays:)`` without the two shortcuts (the ASCII pre-check before the
    /// regular expression, the roster pre-check): the reference the tests hold the shortcuts to.
    func scrubWithoutShortcuts(_ text: String, counts: inout ScrubCounts, shiftDays: Int? = nil) -> String {
        if text.isEmpty { return text }
        var current = text
        if PatternDetectors.mayMatch(text) { current = applyDetectors(text, counts: &counts, shiftDays: shiftDays) }
        if PatternDetectors.wordDetectorsMayMatch(current) { current = applyWordDetectors(current, counts: &counts) }
        return applyAllowList(applyRoster(current, counts: &counts), counts: &counts)
    }

    /// Whether the roster pass can change `text`: it holds a roster phone number or birth date,
    /// a roster phrase, a possessive word before a device word, or a capitalized word that is a
    /// given name or follows a title or relation word. Without any, the pass finds no span and
    /// returns the text as it is, so it is skipped.
    private func rosterMayApply(_ text: String) -> Bool {
        var workspace = LineWorkspace(capacity: text.utf8.count)
        // Line breaks do not end a name (see applyRoster).
        workspace.load(text.utf8.contains(10) ? text.replacingOccurrences(of: "\n", with: " ") : text)
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
            for t in 0..<workspace.tokenCount {
                let token = workspace.tokens[t]
                if t + 1 < workspace.tokenCount, token.isPossessive,
                    Self.deviceWords.contains(workspace.keyString(workspace.tokens[t + 1]))
                {
                    return true
                }
                guard token.isCapitalized else { continue }
                // Hash probes (a collision only costs the full pass, never a missed name).
                if token.isASCII ? Self.givenNameHashes.contains(token.hash) : FirstNames.isUnambiguousName(workspace.keyString(token)) {
                    return true
                }
                if t > 0 {
                    let previous = workspace.tokens[t - 1]
                    if previous.isASCII
                        ? Self.personWordHashes.contains(previous.hash)
                        : Self.titles.contains(workspace.keyString(previous)) || Self.relations.contains(workspace.keyString(previous))
                    {
                        return true
                    }
                }
            }
            return false
        }
    }

    private func isBirthDate(_ year: Int, _ month: Int, _ day: Int) -> Bool {
        index.birthDayKeys.contains(IdentifierIndex.dateKey(year: year, monthDay: month * 100 + day))
    }

    /// The first alternative of `alternatives` whose group took part in `match`.
    private static func token(of match: NSTextCheckingResult, in alternatives: [(ScrubToken, String)]) -> ScrubToken {
        for (offset, alternative) in alternatives.enumerated() where match.range(at: offset + 1).location != NSNotFound {
            return alternative.0
        }
        return .id
    }

    private func applyDetectors(_ text: String, counts: inout ScrubCounts, shiftDays: Int?) -> String {
        let utf16Count = text.utf16.count
        var output = ""
        var cursor = text.startIndex
        var changed = false
        var searchFrom = 0
        while searchFrom < utf16Count,
            let match = detectors.firstMatch(in: text, options: [], range: NSRange(location: searchFrom, length: utf16Count - searchFrom))
        {
            guard let whole = Range(match.range, in: text), match.range.length > 0 else { break }
            let token = Self.token(of: match, in: PatternDetectors.alternatives)
            let matched = text[whole]
            var replacement: String?
            switch token {
            case .date:
                replacement = FreeTextDates.replacement(
                    for: matched, before: text[cursor..<whole.lowerBound], shiftDays: shiftDays, isBirthDate: isBirthDate)
            case .phone:
                replacement = PatternDetectors.isPhone(matched) ? token.text : nil
            case .age:
                // "aged 93" → "aged 90 or older"; "93-year-old", "93 yo" → "90 or older".
                let word = matched.prefix(while: { $0.isLetter || $0 == ":" })
                replacement = word.isEmpty ? token.text : String(word) + " " + token.text
            default:
                replacement = token.text
            }
            guard let replacement else {
                // Not an identifier after all (a score such as 7/10): look again one character on.
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

    private func applyWordDetectors(_ text: String, counts: inout ScrubCounts) -> String {
        let range = NSRange(text.startIndex..<text.endIndex, in: text)
        let matches = wordDetectors.matches(in: text, options: [], range: range)
        guard !matches.isEmpty else { return text }
        var output = ""
        var cursor = text.startIndex
        for match in matches {
            guard let whole = Range(match.range, in: text), whole.lowerBound >= cursor else { continue }
            let token = Self.token(of: match, in: PatternDetectors.wordAlternatives)
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
        var workspace = LineWorkspace(capacity: scalars.count)
        workspace.load(text)
        // Phone numbers and birth dates, on the text as it is.
        var phoneRanges: [Range<Int>] = []
        var birthDateRanges: [Range<Int>] = []
        let values = workspace.scalars
        values.withUnsafeBufferPointer { s in
            index.numericMatches(s, groups: &workspace.groups, firstOnly: false) { range, kind in
                if kind == .phone { phoneRanges.append(range) } else { birthDateRanges.append(range) }
            }
        }
        let phones = phoneRanges + birthDateRanges
        // Words of a name may be split across a line break: words and phrases on a copy where
        // line breaks are spaces (same positions).
        let matchScalars = values.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
        matchScalars.withUnsafeBufferPointer { TextTokenizer.tokenize($0, into: &workspace) }
        let tokens = workspace.textTokens()
        var spans: [Span] = []
        let n = tokens.count
        func inNumericRange(_ t: Int) -> Bool {
            let token = tokens[t]
            return phones.contains { $0.overlaps(token.start..<token.end) }
        }
        func isMarker(_ t: Int) -> Bool {
            let token = tokens[t]
            return token.start > 0 && scalars[token.start - 1] == "[" && token.end < scalars.count && scalars[token.end] == "]"
                && ScrubToken(rawValue: String(String.UnicodeScalarView(scalars[token.start..<token.end]))) != nil
        }
        func gap(_ a: Int, _ b: Int) -> Bool {
            matchScalars.withUnsafeBufferPointer { TextTokenizer.isPhraseGap($0, from: tokens[a].end, to: tokens[b].start) }
        }
        /// Whether token `t` starts a sentence (or the text).
        func startsSentence(_ t: Int) -> Bool {
            guard t > 0 else { return true }
            if Self.abbreviatedTitles.contains(tokens[t - 1].key) { return false }
            for i in tokens[t - 1].end..<tokens[t].start {
                switch scalars[i] {
                case ".", "!", "?", "\n", ":", ";", "•", "\"", "(": return true
                default: continue
                }
            }
            return false
        }
        /// Whether token `t` opens a line or follows a bracketed time (`[12:36] mark:`).
        func isSpeakerStart(_ t: Int) -> Bool {
            var i = tokens[t].start - 1
            while i >= 0, scalars[i] == " " || scalars[i] == "\t" { i -= 1 }
            return i < 0 || scalars[i] == "\n" || scalars[i] == "]" || scalars[i] == ">"
        }
        /// Whether token `t` ends its line or the text (a signature).
        func endsLine(_ t: Int) -> Bool {
            guard t + 1 < n else { return true }
            return scalars[tokens[t].end..<tokens[t + 1].start].contains("\n")
        }
        /// Whether a sentence ends between tokens `first` and `last` (after a word that is not
        /// an initial or an abbreviated title).
        func crossesSentence(_ first: Int, _ last: Int) -> Bool {
            for t in first..<last where tokens[t].letterCount > 1 && !Self.abbreviatedTitles.contains(tokens[t].key) {
                for i in tokens[t].end..<tokens[t + 1].start where [".", "!", "?", ";", ":"].contains(scalars[i]) { return true }
            }
            return false
        }
        for range in phones {
            let isDate = birthDateRanges.contains(range)
            spans.append(Span(start: range.lowerBound, end: range.upperBound, token: isDate ? .date : .phone, suffix: nil, firstToken: -1, lastToken: -1))
        }
        var matches: [IdentifierIndex.Match] = []
        matchScalars.withUnsafeBufferPointer { s in
            index.matches(
                scalars: s, workspace: workspace, skip: { inNumericRange($0) || isMarker($0) },
                accept: { m in
                    guard m.lastToken > m.firstToken else { return true }
                    // A name does not run across the end of a sentence ("…a hot bath. Will walk"),
                    // and initials with a surname count only as written for a name ("I hope",
                    // "a little" are no initials).
                    if crossesSentence(m.firstToken, m.lastToken) { return false }
                    if m.kind == .name, tokens[m.firstToken].letterCount == 1 || tokens[m.lastToken].letterCount == 1 {
                        return (m.firstToken...m.lastToken).allSatisfy { tokens[$0].isCapitalized }
                    }
                    return true
                }
            ) { matches.append($0) }
        }
        var tokenSpan = [Int?](repeating: nil, count: n)
        var wordSpans: [Span] = []
        func add(_ first: Int, _ last: Int, _ token: ScrubToken) {
            let end = tokens[last]
            let suffix: Range<Int>? = token == .name && end.isPossessive ? end.coreEnd..<end.end : nil
            wordSpans.append(
                Span(
                    start: tokens[first].start, end: token == .name ? end.coreEnd : end.end, token: token, suffix: suffix, firstToken: first,
                    lastToken: last))
            for t in first...last { tokenSpan[t] = wordSpans.count - 1 }
        }
        func isName(_ t: Int) -> Bool { tokenSpan[t].map { wordSpans[$0].token == .name } ?? false }
        /// Whether token `t - 1` is a title or relation word that introduces token `t` (in the
        /// same sentence; only an abbreviated title may be followed by its dot).
        func introducedByPersonWord(_ t: Int) -> Bool {
            guard t > 0, gap(t - 1, t) else { return false }
            let previous = tokens[t - 1].key
            if Self.abbreviatedTitles.contains(previous) { return true }
            guard Self.titles.contains(previous) || Self.relations.contains(previous) else { return false }
            return !startsSentence(t)
        }

        // Roster phrases; a lone word that is also vocabulary waits for evidence (below).
        var pending: [(token: Int, kind: ScrubToken)] = []
        for m in matches {
            let kind = ScrubToken(m.kind)
            // A roster ZIP that is a measurement (`Walked 60636 steps`, `Step count 30359`) is no ZIP.
            if kind == .address, m.firstToken == m.lastToken, tokens[m.firstToken].letterCount == 0 {
                let next = m.lastToken + 1 < n && gap(m.lastToken, m.lastToken + 1) ? tokens[m.lastToken + 1].key : nil
                let previous = m.firstToken > 0 && gap(m.firstToken - 1, m.firstToken) ? tokens[m.firstToken - 1].key : nil
                if next.map(AllowListDecider.units.contains) == true || previous.map(Self.measurementWords.contains) == true { continue }
            }
            if m.firstToken == m.lastToken, kind == .name || kind == .address,
                ClinicalVocabulary.contains(tokens[m.firstToken].key) || vocabulary.contains(tokens[m.firstToken].key)
            {
                pending.append((m.firstToken, kind))
            } else {
                add(m.firstToken, m.lastToken, kind)
            }
        }
        // People not on the roster: given names, and capitalized words after a title or relation.
        for t in 0..<n where tokenSpan[t] == nil && tokens[t].isCapitalized && !isMarker(t) && !inNumericRange(t) {
            let key = tokens[t].key
            if FirstNames.isUnambiguousName(key) {
                add(t, t, .name)
            } else if introducedByPersonWord(t),
                !ClinicalVocabulary.calendar.contains(key), !ClinicalVocabulary.drugs.contains(key),
                !ClinicalVocabulary.clinical.contains(key), tokens[t].letterCount >= 2
            {
                add(t, t, .name)
            }
        }
        // Vocabulary words on the roster, where the text says "person".
        var changed = true
        while changed {
            changed = false
            for (i, candidate) in pending.enumerated() where candidate.token >= 0 {
                let t = candidate.token
                let token = tokens[t]
                let previous = t > 0 && gap(t - 1, t) ? tokens[t - 1].key : nil
                let introduced = introducedByPersonWord(t)
                let next = t + 1 < n && gap(t, t + 1) ? tokens[t + 1].key : nil
                let beforePrevious = t > 1 && gap(t - 2, t - 1) ? tokens[t - 2].key : nil
                // Evidence in any case: a title before it, "this is X", "call X", a sign-off
                // ("Signed, X"), "X here"/"X again" opening a sentence, a person verb after it.
                var strong = introduced && previous.map(Self.abbreviatedTitles.contains) == true
                if token.isCapitalized, introduced, previous.map(Self.titles.contains) == true { strong = true }
                if previous == "is", beforePrevious == "this" { strong = true }
                if let previous, Self.callWords.contains(previous) { strong = true }
                if t > 0, Self.signOffs.contains(tokens[t - 1].key), endsLine(t) { strong = true }
                if let next, Self.selfReferences.contains(next), startsSentence(t) { strong = true }
                if token.isCapitalized, let next, Self.personVerbs.contains(next), !token.isPossessive { strong = true }
                // A particle between two name parts: "Anna van der Berg".
                if t > 0, t + 1 < n, gap(t - 1, t), gap(t, t + 1), isName(t - 1) || isMarker(t - 1), isName(t + 1) || isMarker(t + 1) {
                    strong = true
                }
                if previous == "from", t + 1 < n, scalars[tokens[t].end..<tokens[t + 1].start].contains(":") { strong = true }
                // A speaker label: "[12:36] mark: knees bad", "hope: …" opening a line.
                if token.end < scalars.count, scalars[token.end] == ":", isSpeakerStart(t) { strong = true }
                guard tokenSpan[t] == nil else { continue }
                var evidence = strong
                if candidate.kind == .address {
                    // A city that is also a word (Reading, Mobile): capitalized inside a sentence (a
                    // roster name always wins), or after a word that introduces a place.
                    if token.isCapitalized, !startsSentence(t) { evidence = true }
                    if let previous, Self.placeWords.contains(previous) || (previous == "is" && beforePrevious.map(Self.homeWords.contains) == true) {
                        evidence = true
                    }
                } else if token.isCapitalized {
                    // A roster name always wins: capitalized inside a sentence, it is the name.
                    if !startsSentence(t), !ClinicalVocabulary.calendar.contains(token.key) { evidence = true }
                    if introduced { evidence = true }
                    if let previous, !startsSentence(t), Self.interactions.contains(previous) { evidence = true }
                    if token.isPossessive, !(next.map { Self.eponymHeads.contains($0) || ClinicalVocabulary.calendar.contains($0) } ?? false) {
                        evidence = true
                    }
                    if (t > 0 && gap(t - 1, t) && isName(t - 1)) || (t + 1 < n && gap(t, t + 1) && isName(t + 1)) { evidence = true }
                    if startsSentence(t), t + 1 < n, isMarker(t + 1) || (t > 0 && isMarker(t - 1)) { evidence = true }
                }
                guard evidence else { continue }
                add(t, t, candidate.kind)
                pending[i].token = -1
                changed = true
            }
        }

        // A capitalized word right after a name that is not the end of the sentence: its
        // surname ("Emma Okafor", "Dr. Amara Okafor"); and one between two names: a nickname
        // (Katherine "Kit" O'Brien).
        for t in 1..<max(n, 1) where tokenSpan[t] == nil && tokens[t].isCapitalized && tokens[t].letterCount >= 2 && !isMarker(t) {
            let afterName = isName(t - 1) && gap(t - 1, t) && !startsSentence(t)
            let betweenNames = t + 1 < n && isName(t - 1) && isName(t + 1) && gap(t - 1, t) && gap(t, t + 1)
            guard betweenNames || (afterName && !ClinicalVocabulary.contains(tokens[t].key)) else { continue }
            add(t, t, .name)
        }

        // "Jane's Apple Watch": a possessive name (or capitalized word) before a device word.
        var t = 0
        while t + 1 < n {
            let owner = tokens[t]
            let ownerSpan = tokenSpan[t].map { wordSpans[$0] }
            let isNameOwner = ownerSpan.map { $0.token == .name && $0.lastToken == t } ?? false
            guard owner.isPossessive, isNameOwner || (ownerSpan == nil && owner.isCapitalized && !isMarker(t)),
                Self.deviceWords.contains(tokens[t + 1].key), tokenSpan[t + 1] == nil,
                values.withUnsafeBufferPointer({ TextTokenizer.isPhraseGap($0, from: owner.end, to: tokens[t + 1].start) })
            else {
                t += 1
                continue
            }
            var last = t + 1
            while last + 1 < n, last - t < 5, tokenSpan[last + 1] == nil,
                values.withUnsafeBufferPointer({ TextTokenizer.isPhraseGap($0, from: tokens[last].end, to: tokens[last + 1].start) }),
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
