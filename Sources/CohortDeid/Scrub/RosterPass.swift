/// The scrubber's third pass: the roster and people (see ``Scrubber``). Every identifier of
/// every participant, found by hash lookups in the ``IdentifierIndex`` (phone digits and birth
/// dates by ``IdentifierIndex/numericMatches(_:groups:firstOnly:_:)``, phrases by
/// ``IdentifierIndex/matches(scalars:workspace:skip:accept:_:)``), then people who are not on
/// the roster, roster words that are also vocabulary where the text says "person", surnames
/// and nicknames next to a name, and devices named after their owner.
///
/// The steps run in that order on one ``RosterText`` (each step sees the names the earlier ones
/// found), and the text is rewritten once at the end.
struct RosterPass: Sendable {
    let index: IdentifierIndex
    /// Words that are ordinary language: a roster word among them waits for evidence.
    let vocabulary: SafeVocabulary

    /// `text` with every roster identifier and person replaced by its token; adds the
    /// replacements to `counts`.
    func apply(_ text: String, counts: inout ScrubCounts) -> String {
        var words = RosterText(text, index: index)
        words.addRosterPhrases(words.rosterMatches(index: index), vocabulary: vocabulary)
        words.addPeopleNotOnRoster()
        words.addVocabularyWordsThatNamePeople()
        words.addSurnamesAndNicknames()
        words.addDevicesNamedAfterPeople()
        return words.rendered(text, counts: &counts)
    }
}

/// A text as the roster pass reads it: its scalars, its words (line breaks read as spaces, so
/// a name split across lines is one phrase), the phone numbers and birth dates in it, and the
/// spans found so far, word by word.
struct RosterText {
    /// A stretch of the text replaced by one token.
    struct Span {
        var start: Int
        var end: Int
        var token: ScrubToken
        /// Scalars kept after the token (a possessive `'s`).
        var suffix: Range<Int>?
        var firstToken: Int
        var lastToken: Int
    }

    let scalars: [Unicode.Scalar]
    /// The text's scalar values, as they are.
    let values: [UInt32]
    /// The same with line breaks as spaces (same positions): what words and phrases are read from.
    let matchScalars: [UInt32]
    let workspace: LineWorkspace
    let tokens: [TextToken]
    /// Roster phone numbers, then roster birth dates (scalar ranges).
    let numericRanges: [Range<Int>]
    let birthDateRanges: [Range<Int>]
    /// For each word, the index in `wordSpans` of the span that covers it.
    private(set) var tokenSpan: [Int?]
    private(set) var wordSpans: [Span] = []
    /// Roster words that are also vocabulary, waiting for evidence that they name someone.
    private(set) var pending: [(token: Int, kind: ScrubToken)] = []

    var n: Int { tokens.count }

    init(_ text: String, index: IdentifierIndex) {
        scalars = Array(text.unicodeScalars)
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
        // Words of a name may be split across a line break: words and phrases on a copy where
        // line breaks are spaces (same positions).
        let matchScalars = values.map { $0 == 0x0A || $0 == 0x0D ? 0x20 : $0 }
        matchScalars.withUnsafeBufferPointer { TextTokenizer.tokenize($0, into: &workspace) }
        self.values = values
        self.matchScalars = matchScalars
        self.numericRanges = phoneRanges + birthDateRanges
        self.birthDateRanges = birthDateRanges
        self.tokens = workspace.textTokens()
        self.workspace = workspace
        tokenSpan = [Int?](repeating: nil, count: tokens.count)
    }

    // MARK: What a word is

    func inNumericRange(_ t: Int) -> Bool {
        let token = tokens[t]
        return numericRanges.contains { $0.overlaps(token.start..<token.end) }
    }

    /// Whether word `t` is a token an earlier pass wrote (`[PHONE]`).
    func isMarker(_ t: Int) -> Bool {
        let token = tokens[t]
        return token.start > 0 && scalars[token.start - 1] == "[" && token.end < scalars.count && scalars[token.end] == "]"
            && ScrubToken(rawValue: String(String.UnicodeScalarView(scalars[token.start..<token.end]))) != nil
    }

    /// Whether words `a` and `b` may be parts of one phrase (only spaces and the like between).
    func gap(_ a: Int, _ b: Int) -> Bool {
        matchScalars.withUnsafeBufferPointer { TextTokenizer.isPhraseGap($0, from: tokens[a].end, to: tokens[b].start) }
    }

    /// Whether token `t` starts a sentence (or the text).
    func startsSentence(_ t: Int) -> Bool {
        guard t > 0 else { return true }
        if Scrubber.abbreviatedTitles.contains(tokens[t - 1].key) { return false }
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
        for t in first..<last where tokens[t].letterCount > 1 && !Scrubber.abbreviatedTitles.contains(tokens[t].key) {
            for i in tokens[t].end..<tokens[t + 1].start where [".", "!", "?", ";", ":"].contains(scalars[i]) { return true }
        }
        return false
    }

    func isName(_ t: Int) -> Bool { tokenSpan[t].map { wordSpans[$0].token == .name } ?? false }

    /// Whether token `t - 1` is a title or relation word that introduces token `t` (in the
    /// same sentence; only an abbreviated title may be followed by its dot).
    func introducedByPersonWord(_ t: Int) -> Bool {
        guard t > 0, gap(t - 1, t) else { return false }
        let previous = tokens[t - 1].key
        if Scrubber.abbreviatedTitles.contains(previous) { return true }
        guard Scrubber.titles.contains(previous) || Scrubber.relations.contains(previous) else { return false }
        return !startsSentence(t)
    }

    /// The key of the word before `t` in the same phrase, if any.
    func previousKey(_ t: Int) -> String? { t > 0 && gap(t - 1, t) ? tokens[t - 1].key : nil }
    /// The key of the word after `t` in the same phrase, if any.
    func nextKey(_ t: Int) -> String? { t + 1 < n && gap(t, t + 1) ? tokens[t + 1].key : nil }

    // MARK: Steps

    /// The roster's phrases among the words (numbers and markers skipped): a name does not run
    /// across the end of a sentence, and initials with a surname count only as written for a name.
    func rosterMatches(index: IdentifierIndex) -> [IdentifierIndex.Match] {
        var matches: [IdentifierIndex.Match] = []
        matchScalars.withUnsafeBufferPointer { s in
            index.matches(
                scalars: s, workspace: workspace, skip: { inNumericRange($0) || isMarker($0) },
                accept: { m in
                    guard m.lastToken > m.firstToken else { return true }
                    // "…a hot bath. Will walk"; "I hope", "a little" are no initials.
                    if crossesSentence(m.firstToken, m.lastToken) { return false }
                    if m.kind == .name, tokens[m.firstToken].letterCount == 1 || tokens[m.lastToken].letterCount == 1 {
                        return (m.firstToken...m.lastToken).allSatisfy { tokens[$0].isCapitalized }
                    }
                    return true
                }
            ) { matches.append($0) }
        }
        return matches
    }

    /// Marks words `first...last` as one span of `token`.
    mutating func add(_ first: Int, _ last: Int, _ token: ScrubToken) {
        let end = tokens[last]
        let suffix: Range<Int>? = token == .name && end.isPossessive ? end.coreEnd..<end.end : nil
        wordSpans.append(
            Span(
                start: tokens[first].start, end: token == .name ? end.coreEnd : end.end, token: token, suffix: suffix, firstToken: first,
                lastToken: last))
        for t in first...last { tokenSpan[t] = wordSpans.count - 1 }
    }

    /// Roster phrases become spans; a lone word that is also vocabulary waits for evidence
    /// (``addVocabularyWordsThatNamePeople()``), and a roster ZIP that is a measurement
    /// (`Walked 60636 steps`, `Step count 30359`) is no ZIP.
    mutating func addRosterPhrases(_ matches: [IdentifierIndex.Match], vocabulary: SafeVocabulary) {
        for m in matches {
            let kind = ScrubToken(m.kind)
            if kind == .address, m.firstToken == m.lastToken, tokens[m.firstToken].letterCount == 0 {
                let next = nextKey(m.lastToken)
                let previous = previousKey(m.firstToken)
                if next.map(AllowListDecider.units.contains) == true || previous.map(Scrubber.measurementWords.contains) == true { continue }
            }
            if m.firstToken == m.lastToken, kind == .name || kind == .address,
                ClinicalVocabulary.contains(tokens[m.firstToken].key) || vocabulary.contains(tokens[m.firstToken].key)
            {
                pending.append((m.firstToken, kind))
            } else {
                add(m.firstToken, m.lastToken, kind)
            }
        }
    }

    /// People not on the roster: given names, and capitalized words after a title or relation.
    mutating func addPeopleNotOnRoster() {
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
    }

    /// Vocabulary words on the roster, where the text says "person"; repeated until no word
    /// changes (a name found makes its neighbour's evidence).
    mutating func addVocabularyWordsThatNamePeople() {
        var changed = true
        while changed {
            changed = false
            for (i, candidate) in pending.enumerated() where candidate.token >= 0 {
                let t = candidate.token
                guard tokenSpan[t] == nil else { continue }
                let evidence =
                    hasEvidenceInAnyCase(t)
                    || (candidate.kind == .address ? hasPlaceEvidence(t) : tokens[t].isCapitalized && hasCapitalizedNameEvidence(t))
                guard evidence else { continue }
                add(t, t, candidate.kind)
                pending[i].token = -1
                changed = true
            }
        }
    }

    /// Evidence in any case: a title before it, "this is X", "call X", a sign-off ("Signed, X"),
    /// "X here"/"X again" opening a sentence, a person verb after it, a particle between two
    /// name parts ("Anna van der Berg"), "from X:", a speaker label ("[12:36] mark: knees bad").
    func hasEvidenceInAnyCase(_ t: Int) -> Bool {
        let token = tokens[t]
        let previous = previousKey(t)
        let next = nextKey(t)
        let introduced = introducedByPersonWord(t)
        if introduced, previous.map(Scrubber.abbreviatedTitles.contains) == true { return true }
        if token.isCapitalized, introduced, previous.map(Scrubber.titles.contains) == true { return true }
        if previous == "is", t > 1, gap(t - 2, t - 1), tokens[t - 2].key == "this" { return true }
        if let previous, Scrubber.callWords.contains(previous) { return true }
        if t > 0, Scrubber.signOffs.contains(tokens[t - 1].key), endsLine(t) { return true }
        if let next, Scrubber.selfReferences.contains(next), startsSentence(t) { return true }
        if token.isCapitalized, let next, Scrubber.personVerbs.contains(next), !token.isPossessive { return true }
        if t > 0, t + 1 < n, gap(t - 1, t), gap(t, t + 1), isName(t - 1) || isMarker(t - 1), isName(t + 1) || isMarker(t + 1) {
            return true
        }
        if previous == "from", t + 1 < n, scalars[tokens[t].end..<tokens[t + 1].start].contains(":") { return true }
        return token.end < scalars.count && scalars[token.end] == ":" && isSpeakerStart(t)
    }

    /// A city that is also a word (Reading, Mobile): capitalized inside a sentence (a roster
    /// name always wins), or after a word that introduces a place ("moved to X", "home is X").
    func hasPlaceEvidence(_ t: Int) -> Bool {
        if tokens[t].isCapitalized, !startsSentence(t) { return true }
        guard let previous = previousKey(t) else { return false }
        let beforePrevious = t > 1 && gap(t - 2, t - 1) ? tokens[t - 2].key : nil
        return Scrubber.placeWords.contains(previous) || (previous == "is" && beforePrevious.map(Scrubber.homeWords.contains) == true)
    }

    /// A capitalized roster word is the name inside a sentence, after a title, relation or
    /// interaction word, as a possessive that is no eponym, next to another name, or opening a
    /// sentence next to a token.
    func hasCapitalizedNameEvidence(_ t: Int) -> Bool {
        let token = tokens[t]
        if !startsSentence(t), !ClinicalVocabulary.calendar.contains(token.key) { return true }
        if introducedByPersonWord(t) { return true }
        if let previous = previousKey(t), !startsSentence(t), Scrubber.interactions.contains(previous) { return true }
        let next = nextKey(t)
        if token.isPossessive, !(next.map { Scrubber.eponymHeads.contains($0) || ClinicalVocabulary.calendar.contains($0) } ?? false) {
            return true
        }
        if (t > 0 && gap(t - 1, t) && isName(t - 1)) || (t + 1 < n && gap(t, t + 1) && isName(t + 1)) { return true }
        return startsSentence(t) && t + 1 < n && (isMarker(t + 1) || (t > 0 && isMarker(t - 1)))
    }

    /// A capitalized word right after a name that is not the end of the sentence: its surname
    /// ("Emma Okafor", "Dr. Amara Okafor"); and one between two names: a nickname
    /// (Katherine "Kit" O'Brien).
    mutating func addSurnamesAndNicknames() {
        for t in 1..<max(n, 1) where tokenSpan[t] == nil && tokens[t].isCapitalized && tokens[t].letterCount >= 2 && !isMarker(t) {
            let afterName = isName(t - 1) && gap(t - 1, t) && !startsSentence(t)
            let betweenNames = t + 1 < n && isName(t - 1) && isName(t + 1) && gap(t - 1, t) && gap(t, t + 1)
            guard betweenNames || (afterName && !ClinicalVocabulary.contains(tokens[t].key)) else { continue }
            add(t, t, .name)
        }
    }

    /// Whether words `a` and `b` are one phrase in the text as it is (line breaks count).
    private func gapAsWritten(_ a: Int, _ b: Int) -> Bool {
        values.withUnsafeBufferPointer { TextTokenizer.isPhraseGap($0, from: tokens[a].end, to: tokens[b].start) }
    }

    /// "Jane's Apple Watch": a possessive name (or capitalized word) before a device word; the
    /// device's name runs on over device words, capitalized words and numbers (at most five).
    mutating func addDevicesNamedAfterPeople() {
        var t = 0
        while t + 1 < n {
            let owner = tokens[t]
            let ownerSpan = tokenSpan[t].map { wordSpans[$0] }
            let isNameOwner = ownerSpan.map { $0.token == .name && $0.lastToken == t } ?? false
            guard owner.isPossessive, isNameOwner || (ownerSpan == nil && owner.isCapitalized && !isMarker(t)),
                Scrubber.deviceWords.contains(tokens[t + 1].key), tokenSpan[t + 1] == nil, gapAsWritten(t, t + 1)
            else {
                t += 1
                continue
            }
            var last = t + 1
            while last + 1 < n, last - t < 5, tokenSpan[last + 1] == nil, gapAsWritten(last, last + 1),
                Scrubber.deviceWords.contains(tokens[last + 1].key) || tokens[last + 1].isCapitalized || tokens[last + 1].letterCount == 0
            {
                last += 1
            }
            let first = ownerSpan?.firstToken ?? t
            if let index = tokenSpan[t] { wordSpans[index].token = .id; wordSpans[index].end = -1 }  // superseded
            wordSpans.append(Span(start: tokens[first].start, end: tokens[last].end, token: .device, suffix: nil, firstToken: first, lastToken: last))
            for k in first...last { tokenSpan[k] = wordSpans.count - 1 }
            t = last + 1
        }
    }

    /// `text` with every span replaced by its token (the leftmost of overlapping spans wins);
    /// adds the replacements to `counts`.
    func rendered(_ text: String, counts: inout ScrubCounts) -> String {
        var spans = numericRanges.map { range in
            Span(
                start: range.lowerBound, end: range.upperBound, token: birthDateRanges.contains(range) ? .date : .phone, suffix: nil, firstToken: -1,
                lastToken: -1)
        }
        spans += wordSpans.filter { $0.end >= 0 }
        guard !spans.isEmpty else { return text }
        spans.sort { $0.start < $1.start }
        // UTF-8 encoded scalar by scalar into one buffer (appending scalars to a
        // `String.UnicodeScalarView` was 12 % of the scrubber's time, issue 28).
        var output: [UInt8] = []
        output.reserveCapacity(text.utf8.count + 16)
        var cursor = 0
        for span in spans where span.start >= cursor {
            Self.appendUTF8(scalars[cursor..<span.start], to: &output)
            output.append(contentsOf: span.token.text.utf8)
            counts.add(span.token)
            if let suffix = span.suffix {
                Self.appendUTF8(scalars[suffix], to: &output)
                cursor = suffix.upperBound
            } else {
                cursor = span.end
            }
        }
        Self.appendUTF8(scalars[cursor...], to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// Appends the UTF-8 encoding of `scalars` to `output`.
    private static func appendUTF8(_ scalars: ArraySlice<Unicode.Scalar>, to output: inout [UInt8]) {
        for scalar in scalars {
            let v = scalar.value
            if v < 0x80 {
                output.append(UInt8(v))
            } else {
                UTF8.encode(scalar) { output.append($0) }
            }
        }
    }
}
