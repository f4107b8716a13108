/// The allow-list's shortcut: text whose every word is plainly safe needs no decision.
///
/// A text passes when every word is a lower-case or capitalised ASCII word the vocabulary holds
/// (one hash probe each, on the tokenizer's own key bytes) that is neither a proper noun nor a
/// given name or nickname when capitalised, nor a number word, ordinal or holiday; or a number of
/// at most four digits outside the ages 90–129 that is joined to no other number; or a typed
/// token; and nothing between the words but spaces and ordinary punctuation (a dot only before a
/// space or the end: `jane.doe` does not pass; no `@`, `#`, `/`, `_`). Such text gives
/// ``AllowListDecider`` nothing to replace (every rule it has needs one of the things excluded
/// here), so the decider is not run; `AllowListTests` and the corpus tests hold both paths to the
/// same output.
enum AllowListFastPath {
    /// Keys that may start a rule of the decider: number words, ordinals, holidays.
    static let special = WordTable(
        Set(AllowListDecider.digitWords.keys).union(AllowListDecider.ordinalWords).union(AllowListDecider.holidays))
    /// Given names and nicknames (a capitalised one may be a name in person context).
    static let names = WordTable(FirstNames.names.union(Nicknames.table.keys).union(Nicknames.formalNames.keys))
    /// Street suffixes (`lane`, `st`).
    static let streetSuffixes = WordTable(AllowListDecider.streetSuffixes)
    /// Relation words (a capitalised word two before one may be a name in apposition: `Baker, my stepdad,`).
    static let relations = WordTable(Scrubber.relations)
    /// ``SafeVocabulary/shortWords`` as a table.
    static let short = WordTable(SafeVocabulary.shortWords)

    /// Whether the tokenized text `s` (tokens in `workspace`) is plainly safe.
    static func isPlainlySafe(_ s: UnsafeBufferPointer<UInt32>, _ workspace: LineWorkspace, _ vocabulary: SafeVocabulary) -> Bool {
        let n = workspace.tokenCount
        var cursor = 0
        var previousDigits = false
        var sawNumber = false
        var sawStreetSuffix = false
        var singleLetters = 0
        return workspace.keyBytes.withUnsafeBufferPointer { keyBytes -> Bool in
            for t in 0..<n {
                let token = workspace.tokens[t]
                guard benign(s, from: cursor, to: token.start) else { return false }
                cursor = token.end
                guard token.isASCII, token.keyLength > 0 else { return false }
                let key = UnsafeBufferPointer(rebasing: keyBytes[token.keyStart..<(token.keyStart + token.keyLength)])
                if ResidualScanner.isMarker(token, in: s) {
                    previousDigits = false
                    continue
                }
                var digits = 0
                for b in key where b &- 0x30 < 10 { digits += 1 }
                if digits > 0 {
                    // A short number alone: no run, no date, no age, no glued unit.
                    guard digits == key.count, digits <= 4, !previousDigits else { return false }
                    var value = 0
                    for b in key { value = value * 10 + Int(b &- 0x30) }
                    if value >= 90 && value < 130 { return false }
                    previousDigits = true
                    sawNumber = true
                    continue
                }
                // Letters glued by a dash to a number (`274-CAKE`, keypad letters) are the decider's.
                if previousDigits, token.start > 0, s[token.start - 1] == 0x2D { return false }
                previousDigits = false
                if special.contains(hash: token.hash, bytes: key) { return false }
                // Letters spelled out one by one (`o t t i l i e`).
                singleLetters = key.count == 1 ? singleLetters + 1 : 0
                if singleLetters >= 4 { return false }
                if t >= 2, workspace.tokens[t - 2].isCapitalized, relations.contains(hash: token.hash, bytes: key) { return false }
                // A house number and a street suffix (`12 Oak Lane`) is the decider's.
                if streetSuffixes.contains(hash: token.hash, bytes: key) { sawStreetSuffix = true }
                if sawNumber && sawStreetSuffix { return false }
                if key.count <= 2 {
                    guard short.contains(hash: token.hash, bytes: key) else { return false }
                    // Initials: a capital with a dot, or capitals only (`JD`); a short name (`Mo`).
                    if token.isCapitalized, key.count == 1 || isAllCapitals(s, token) || names.contains(hash: token.hash, bytes: key) {
                        return false
                    }
                    continue
                }
                guard vocabulary.contains(hash: token.hash, bytes: key) else { return false }
                if token.isCapitalized {
                    if vocabulary.properNouns.contains(hash: token.hash, bytes: key) || names.contains(hash: token.hash, bytes: key) { return false }
                    if key.count <= 3, isAllCapitals(s, token) { return false }
                }
            }
            return benign(s, from: cursor, to: s.count)
        }
    }

    private static func isAllCapitals(_ s: UnsafeBufferPointer<UInt32>, _ token: PackedToken) -> Bool {
        (token.start..<token.coreEnd).allSatisfy { s[$0] &- 0x41 < 26 }
    }

    /// Whether `s[from..<to]` holds only spaces and ordinary punctuation (a dot only before a
    /// space, a line break or the end; brackets only around typed tokens, checked by the caller).
    private static func benign(_ s: UnsafeBufferPointer<UInt32>, from: Int, to: Int) -> Bool {
        var i = from
        while i < to {
            switch s[i] {
            case 0x20, 0x0A, 0x0D, 0x09, 0x2C, 0x21, 0x3F, 0x3B, 0x3A, 0x2D, 0x27, 0x2019, 0x28, 0x29, 0x22, 0x5B, 0x5D, 0xA0, 0x2013,
                0x2014:
                i += 1
            case 0x2E:
                if i + 1 < s.count, s[i + 1] != 0x20, s[i + 1] != 0x0A, s[i + 1] != 0x0D, s[i + 1] != 0x22, s[i + 1] != 0x29 { return false }
                i += 1
            default:
                return false
            }
        }
        return true
    }
}
