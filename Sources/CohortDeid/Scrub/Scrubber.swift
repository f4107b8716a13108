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
    /// The first pass (patterns and dates).
    private(set) var patterns: PatternPass
    /// The second pass (identifiers written without digits).
    private(set) var wordPatterns: WordPatternPass
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
        index = identifiers.compiled(for: .scrubber)
        do {
            patterns = try PatternPass(index: index)
            wordPatterns = try WordPatternPass()
        } catch {
            throw CohortError(.system, "the free-text detectors could not be compiled", underlying: String(describing: error))
        }
    }

    /// This scrubber with its patterns on ICU for every text, as before PCRE2: the reference
    /// the tests hold the PCRE2 route to.
    func onICUOnly() -> Scrubber {
        var copy = self
        copy.patterns.asciiDetectors = nil
        copy.patterns.letterDetectors = nil
        copy.wordPatterns.asciiDetectors = nil
        copy.wordPatterns.letterDetectors = nil
        return copy
    }

    /// The third pass (the roster and people), with this scrubber's vocabulary.
    var roster: RosterPass { RosterPass(index: index, vocabulary: vocabulary) }

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
        if PatternDetectors.needsRegex(text) { current = patterns.apply(text, counts: &counts, shiftDays: shiftDays) }
        if PatternDetectors.wordDetectorsMayMatch(current) { current = wordPatterns.apply(current, counts: &counts) }
        if rosterMayApply(current) { current = roster.apply(current, counts: &counts) }
        return applyAllowList(current, counts: &counts)
    }

    /// ``scrub(_:counts:shiftDays:)`` without the two shortcuts (the ASCII pre-check before the
    /// regular expression, the roster pre-check): the reference the tests hold the shortcuts to.
    func scrubWithoutShortcuts(_ text: String, counts: inout ScrubCounts, shiftDays: Int? = nil) -> String {
        if text.isEmpty { return text }
        var current = text
        if PatternDetectors.mayMatch(text) { current = patterns.apply(text, counts: &counts, shiftDays: shiftDays) }
        if PatternDetectors.wordDetectorsMayMatch(current) { current = wordPatterns.apply(current, counts: &counts) }
        return applyAllowList(roster.apply(current, counts: &counts), counts: &counts)
    }

    /// Whether the roster pass can change `text`: it holds a roster phone number or birth date,
    /// a roster phrase, a possessive word before a device word, or a capitalized word that is a
    /// given name or follows a title or relation word. Without any, the pass finds no span and
    /// returns the text as it is, so it is skipped.
    private func rosterMayApply(_ text: String) -> Bool {
        var workspace = LineWorkspace(capacity: text.utf8.count)
        // Line breaks do not end a name (see RosterText).
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

}
