/// The residual scan's shortcut for values whose every word starts with a digit — timestamps,
/// dates, numbers: most of the values an export's per-slot memo misses (issue 28, seventh round).
///
/// A phrase of the index matches only where each of its keys equals the key of a word of the
/// text (``PhraseMatcher``: the first key finds the entry, each further key is compared). So
/// with any function `shape` of a key, a phrase can match only a text whose words' shapes
/// include the shapes of all its keys. In a plain ASCII text without an apostrophe or a
/// backslash the words are the runs of ASCII letters and digits and their keys those runs in
/// lower case; when every run starts with a digit, no phrase with a key that starts otherwise
/// (a letter, a non-ASCII scalar) can match, nor can the scanner's capitalized-word rule (a word
/// must start with a capital letter). What is left is the numeric matcher, which the shortcut
/// runs as the plain route does. A key's shape here is its length (up to 63) and whether it
/// holds a letter: `13T18` and `00Z` of a timestamp are shapes no roster identifier has, and a
/// four-digit year meets a four-digit key only in a phrase whose other keys are there too.
struct DigitWordPhrases: Sendable {
    /// For each phrase of the index whose keys are all ASCII and start with a digit, the set of
    /// its keys' shapes (``shape(length:hasLetter:)``); no set here holds another.
    let phraseShapes: [UInt128]

    init(_ lookup: IdentifierIndex.KeyLookup) {
        var sets: Set<UInt128> = []
        for phrase in lookup.phrases {
            var shapes: UInt128 = 0
            var digitLed = true
            for k in Int(phrase.keyStart)..<(Int(phrase.keyStart) + Int(phrase.keyCount)) {
                let key = lookup.keys[Int(lookup.phraseKeys[k])]
                // A key no ASCII string equals never equals an ASCII word's key.
                guard key.isASCII, key.byteCount > 0 else {
                    digitLed = false
                    break
                }
                let bytes = lookup.keyBytes[Int(key.byteStart)..<Int(key.byteStart + key.byteCount)]
                guard let first = bytes.first, first &- 0x30 < 10 else {
                    digitLed = false
                    break
                }
                shapes |= Self.shape(length: bytes.count, hasLetter: bytes.contains { $0 &- 0x30 >= 10 })
            }
            if digitLed { sets.insert(shapes) }
        }
        // A set that holds another is met whenever that one is: keep the smaller.
        let sorted = sets.sorted { $0.nonzeroBitCount < $1.nonzeroBitCount }
        var kept: [UInt128] = []
        for set in sorted where !kept.contains(where: { $0 & ~set == 0 }) { kept.append(set) }
        phraseShapes = kept
    }

    /// The shape of a key or word of `length` bytes, with or without a letter, as one bit.
    @inline(__always)
    static func shape(length: Int, hasLetter: Bool) -> UInt128 {
        1 << UInt128((hasLetter ? 64 : 0) + min(length, 63))
    }

    /// Whether some phrase's key shapes are all among `shapes` (then the plain route decides).
    @inline(__always)
    func mayMatch(_ shapes: UInt128) -> Bool {
        phraseShapes.contains { $0 & ~shapes == 0 }
    }

    /// The shapes of the words of `value` when it is plain ASCII without an apostrophe or a
    /// backslash and every word (run of ASCII letters and digits) starts with a digit; else nil.
    static func wordShapes(_ value: UnsafeBufferPointer<UInt8>) -> UInt128? {
        guard let base = value.baseAddress else { return 0 }
        let n = value.count
        var shapes: UInt128 = 0
        var i = 0
        while i < n {
            let b = base[i]
            if b &- 0x30 < 10 {
                let start = i
                var hasLetter = false
                i += 1
                while i < n {
                    let c = base[i]
                    if c &- 0x30 < 10 {
                        i += 1
                    } else if (c | 0x20) &- 0x61 < 26 {
                        hasLetter = true
                        i += 1
                    } else {
                        break
                    }
                }
                shapes |= shape(length: i - start, hasLetter: hasLetter)
                continue
            }
            // A word that starts with a letter, a byte past ASCII, an apostrophe (joins words)
            // or a backslash (a JSON escape): the plain route.
            if b >= 0x80 || (b | 0x20) &- 0x61 < 26 || b == 0x27 || b == 0x5C { return nil }
            i += 1
        }
        return shapes
    }
}

extension ResidualScanner {
    /// ``kindMask(utf8:isJSON:freeText:_:)`` of a value that is not free text, when
    /// ``DigitWordPhrases`` shows that no phrase can match it: then the numeric matcher's kinds,
    /// found as the plain route finds them; nil when that is not shown (take the plain route).
    @inline(__always)
    func digitWordMask(_ value: UnsafeBufferPointer<UInt8>, freeText: Bool, _ workspace: inout LineWorkspace) -> UInt16? {
        guard !freeText, let shapes = DigitWordPhrases.wordShapes(value), !digitWordPhrases.mayMatch(shapes) else { return nil }
        let numeric = index.numericKinds(value, groups: &workspace.groups)
        return (numeric.phone ? Self.bit(.phone) : 0) | (numeric.birthDate ? Self.bit(.birthDate) : 0)
    }
}
