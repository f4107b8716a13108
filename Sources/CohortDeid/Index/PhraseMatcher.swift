/// One run of ``IdentifierIndex/matches(scalars:workspace:skip:accept:_:)`` over the words of a
/// line: the buffers it reads (valid only while the run lasts) and the steps of the match.
struct PhraseMatcher<C: FixedWidthInteger & UnsignedInteger> {
    typealias KeyLookup = IdentifierIndex.KeyLookup
    let lookup: KeyLookup
    let workspace: LineWorkspace
    /// The text the words were found in (its gaps decide whether words are one phrase).
    let text: UnsafeBufferPointer<C>
    let tokens: UnsafeBufferPointer<PackedToken>
    let tokenBytes: UnsafeBufferPointer<UInt8>
    let phraseBytes: UnsafeBufferPointer<UInt8>

    /// Leftmost, longest first, no overlaps: at each word, the first phrase that fits and is
    /// accepted; the search goes on after it.
    func forEachMatch(skip: (Int) -> Bool, accept: (IdentifierIndex.Match) -> Bool, _ body: (IdentifierIndex.Match) -> Void) {
        let count = tokens.count
        var i = 0
        while i < count {
            let token = tokens[i]
            let found = token.isASCII ? lookup.entry(hash: token.hash, bytes: bytes(token)) : lookup.entry(forKey: workspace.nonASCIIKeys[token.keyStart])
            guard let found, !skip(i) else {
                i += 1
                continue
            }
            if let matched = longestMatch(at: i, entry: found, accept: accept) {
                body(IdentifierIndex.Match(firstToken: i, lastToken: i + matched.length - 1, kind: matched.kind))
                i += matched.length
            } else {
                i += 1
            }
        }
    }

    /// The first phrase of entry `found` that fits at word `i` and is accepted.
    func longestMatch(at i: Int, entry found: Int, accept: (IdentifierIndex.Match) -> Bool) -> (length: Int, kind: IdentifierKind)? {
        let entry = lookup.entries[found]
        let count = tokens.count
        guard i + 1 >= count || tokens[i + 1].isASCII else {
            return firstFit(Int(entry.phraseStart)..<Int(entry.phraseEnd), at: i, accept: accept)
        }
        // Only phrases whose second key is the next word's (or one-word phrases, which come
        // last) can fit.
        if i + 1 < count, var b = lookup.bucket(entry: found, hash: tokens[i + 1].hash) {
            while lookup.bucketPhrases[b] >= 0 {
                let p = Int(lookup.bucketPhrases[b])
                if let length = fits(p, at: i, accept: accept) { return (length, lookup.phrases[p].kind) }
                b += 1
            }
        }
        return firstFit(Int(entry.singlesStart)..<Int(entry.phraseEnd), at: i, accept: accept)
    }

    func firstFit(_ phrases: Range<Int>, at i: Int, accept: (IdentifierIndex.Match) -> Bool) -> (length: Int, kind: IdentifierKind)? {
        for p in phrases {
            if let length = fits(p, at: i, accept: accept) { return (length, lookup.phrases[p].kind) }
        }
        return nil
    }

    func bytes(_ t: PackedToken) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: tokenBytes[t.keyStart..<(t.keyStart + t.keyLength)])
    }

    func keyEquals(_ t: PackedToken, _ k: Int) -> Bool {
        let key = lookup.keys[Int(lookup.phraseKeys[k])]
        if t.isASCII, key.isASCII {
            guard t.hash == key.hash, t.keyLength == Int(key.byteCount) else { return false }
            let start = Int(key.byteStart)
            return KeyLookup.equal(UnsafeBufferPointer(rebasing: phraseBytes[start..<(start + Int(key.byteCount))]), bytes(t))
        }
        if t.isASCII, !key.isASCII { return false }  // no ASCII string equals such a key
        return lookup.key(k, equals: workspace.keyString(t))
    }

    /// How many words phrase `p` covers from word `i`, when it fits there and is accepted.
    func fits(_ p: Int, at i: Int, accept: (IdentifierIndex.Match) -> Bool) -> Int? {
        let phrase = lookup.phrases[p]
        if phrase.requiresCapital, !tokens[i].isCapitalized { return nil }
        let length = Int(phrase.keyCount)
        guard i + length <= tokens.count else { return nil }
        var j = 1
        while j < length {
            let previous = tokens[i + j - 1]
            let next = tokens[i + j]
            if !keyEquals(next, Int(phrase.keyStart) + j) || !TextTokenizer.isPhraseGap(text, from: previous.end, to: next.start) {
                return nil
            }
            j += 1
        }
        guard accept(IdentifierIndex.Match(firstToken: i, lastToken: i + length - 1, kind: phrase.kind)) else { return nil }
        return length
    }
}
