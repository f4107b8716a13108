import Foundation

extension IdentifierIndex {
    /// The phrase table compiled for lookups without allocation or reference counting: flat
    /// arrays, an open-addressing table of ASCII first-key hashes (one probe per word, whatever
    /// the roster size), and per first key the phrases bucketed by their second key, so a word
    /// that starts many phrases (a common first name) costs one more probe, not one comparison
    /// per participant. Words with non-ASCII letters fall back to the string-keyed dictionary
    /// and string equality, exactly as ``IdentifierIndex/phrases`` compares.
    struct KeyLookup: Sendable {
        struct PhraseKey: Sendable {
            var hash: UInt64
            var byteStart: Int
            var byteCount: Int
            /// Whether the key has an ASCII form (bytes in `keyBytes`).
            var isASCII: Bool
        }

        struct CompiledPhrase: Sendable {
            var keyStart: Int
            var keyCount: Int
            var kind: IdentifierKind
            var requiresCapital: Bool
        }

        struct Entry: Sendable {
            /// The first key's ASCII form in `keyBytes` (count -1: none).
            var asciiStart: Int
            var asciiCount: Int
            /// Phrases in `entryPhrases[phraseStart..<phraseEnd]`, in ``IdentifierIndex/phrases``
            /// order (longest first); the one-word phrases are the tail from `singlesStart`.
            var phraseStart: Int
            var singlesStart: Int
            var phraseEnd: Int
        }

        private(set) var entries: [Entry] = []
        private(set) var byString: [String: Int] = [:]
        private(set) var phrases: [CompiledPhrase] = []
        private(set) var keys: [PhraseKey] = []
        private(set) var keyStrings: [String] = []
        private(set) var keyBytes: [UInt8] = []
        private(set) var entryPhrases: [Int] = []
        /// Phrase indices bucketed by (entry, ASCII second key), each bucket in phrase order.
        private(set) var bucketPhrases: [Int] = []
        private var firstKeys = HashSlots()
        /// One bit per first-key hash (bits 16–31): most words are rejected here, in a table
        /// small enough to stay in the first-level cache, before the slots are touched.
        private var firstKeyFilter = [UInt64](repeating: 0, count: 1 << 10)
        private var buckets = HashSlots()

        /// An open-addressing map from a 64-bit hash (never 0) plus a tag to an index; one slot is
        /// one cache access.
        struct HashSlots: Sendable {
            struct Slot: Sendable {
                var hash: UInt64 = 0
                var tag = 0
                var value = 0
            }

            var slots: [Slot] = []
            var mask = 0

            init(capacityFor count: Int = 0) {
                var capacity = 16
                while capacity < count * 2 { capacity <<= 1 }
                mask = capacity - 1
                slots = [Slot](repeating: Slot(), count: capacity)
            }

            mutating func insert(hash: UInt64, tag: Int, value: Int) {
                var slot = Int(truncatingIfNeeded: hash ^ UInt64(truncatingIfNeeded: tag) &* 0x9E37_79B9_7F4A_7C15) & mask
                while slots[slot].hash != 0 { slot = (slot + 1) & mask }
                slots[slot] = Slot(hash: hash, tag: tag, value: value)
            }

            /// Calls `accept` on each value stored under `hash` and `tag` until it returns true.
            @inline(__always)
            func find(hash: UInt64, tag: Int, _ accept: (Int) -> Bool) -> Int? {
                slots.withUnsafeBufferPointer { slots in
                    var slot = Int(truncatingIfNeeded: hash ^ UInt64(truncatingIfNeeded: tag) &* 0x9E37_79B9_7F4A_7C15) & mask
                    while true {
                        let entry = slots[slot]
                        if entry.hash == 0 { return nil }
                        if entry.hash == hash, entry.tag == tag, accept(entry.value) { return entry.value }
                        slot = (slot + 1) & mask
                    }
                }
            }
        }

        init(phrases source: [String: [Phrase]]) {
            func addKey(_ key: String) -> Int {
                keyStrings.append(key)
                if let ascii = KeyLookup.asciiForm(key) {
                    keys.append(
                        PhraseKey(hash: TextTokenizer.hash(asciiKey: ascii), byteStart: keyBytes.count, byteCount: ascii.count, isASCII: true))
                    keyBytes += ascii
                } else {
                    keys.append(PhraseKey(hash: 0, byteStart: 0, byteCount: 0, isASCII: false))
                }
                return keys.count - 1
            }
            var bucketLists: [(entry: Int, hash: UInt64, phrases: [Int])] = []
            for (key, list) in source.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
                let entry = entries.count
                let first = addKey(key)
                let phraseStart = entryPhrases.count
                var singlesStart: Int?
                var bucketOf: [UInt64: Int] = [:]
                for phrase in list {
                    let keyStart = keys.count
                    for k in phrase.keys { _ = addKey(k) }
                    phrases.append(CompiledPhrase(keyStart: keyStart, keyCount: phrase.keys.count, kind: phrase.kind, requiresCapital: phrase.requiresCapital))
                    let index = phrases.count - 1
                    entryPhrases.append(index)
                    if phrase.keys.count == 1 {
                        if singlesStart == nil { singlesStart = entryPhrases.count - 1 }
                    } else if keys[keyStart + 1].isASCII {
                        let h = keys[keyStart + 1].hash
                        if let b = bucketOf[h] {
                            bucketLists[b].phrases.append(index)
                        } else {
                            bucketOf[h] = bucketLists.count
                            bucketLists.append((entry, h, [index]))
                        }
                    }
                }
                byString[key] = entry
                entries.append(
                    Entry(
                        asciiStart: keys[first].byteStart, asciiCount: keys[first].isASCII ? keys[first].byteCount : -1,
                        phraseStart: phraseStart, singlesStart: singlesStart ?? entryPhrases.count, phraseEnd: entryPhrases.count))
            }
            firstKeys = HashSlots(capacityFor: entries.count)
            for (index, entry) in entries.enumerated() where entry.asciiCount >= 0 {
                let bytes = keyBytes[entry.asciiStart..<(entry.asciiStart + entry.asciiCount)]
                let hash = TextTokenizer.hash(asciiKey: bytes)
                firstKeys.insert(hash: hash, tag: 0, value: index)
                let bit = Int(truncatingIfNeeded: hash >> 16) & 0xFFFF
                firstKeyFilter[bit >> 6] |= 1 << UInt64(bit & 63)
            }
            buckets = HashSlots(capacityFor: bucketLists.count)
            for bucket in bucketLists {
                // value: start in bucketPhrases; the bucket ends at the next -1.
                buckets.insert(hash: bucket.hash, tag: bucket.entry, value: bucketPhrases.count)
                bucketPhrases += bucket.phrases
                bucketPhrases.append(-1)
            }
        }

        /// The ASCII bytes equal (as a `String`) to `key`, or nil when no ASCII string equals it.
        static func asciiForm(_ key: String) -> [UInt8]? {
            if key.utf8.allSatisfy({ $0 < 0x80 }) { return Array(key.utf8) }
            // A string equals an ASCII one only when its canonical composition is ASCII
            // (e.g. a KELVIN SIGN left by folding).
            let composed = key.precomposedStringWithCanonicalMapping
            guard composed.utf8.allSatisfy({ $0 < 0x80 }), composed == key else { return nil }
            return Array(composed.utf8)
        }

        /// The entry whose first key is the ASCII key `bytes` (hash `hash`).
        @inline(__always)
        func entry(hash: UInt64, bytes: UnsafeBufferPointer<UInt8>) -> Int? {
            let bit = Int(truncatingIfNeeded: hash >> 16) & 0xFFFF
            guard firstKeyFilter[bit >> 6] & (1 << UInt64(bit & 63)) != 0 else { return nil }
            return firstKeys.find(hash: hash, tag: 0) { index in
                let entry = entries[index]
                return entry.asciiCount == bytes.count
                    && keyBytes.withUnsafeBufferPointer {
                        Self.equal(UnsafeBufferPointer(rebasing: $0[entry.asciiStart..<(entry.asciiStart + entry.asciiCount)]), bytes)
                    }
            }
        }

        /// Where in `bucketPhrases` the phrases of `entry` with ASCII second key hash `hash` start.
        @inline(__always)
        func bucket(entry: Int, hash: UInt64) -> Int? {
            buckets.find(hash: hash, tag: entry) { _ in true }
        }

        @inline(__always)
        static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
            guard a.count == b.count else { return false }
            for i in 0..<a.count where a[i] != b[i] { return false }
            return true
        }
    }

    /// The identifier phrases among the words of a ``LineWorkspace`` (leftmost, longest first;
    /// no overlaps), exactly as ``matches(in:tokens:skip:)`` finds them; `skip` is asked only
    /// for words that start a phrase.
    func matches<C: FixedWidthInteger & UnsignedInteger>(
        scalars s: UnsafeBufferPointer<C>, workspace ws: LineWorkspace, skip: (Int) -> Bool, _ body: (Match) -> Void
    ) {
        let lookup = self.lookup
        guard !lookup.entries.isEmpty else { return }
        ws.tokens.withUnsafeBufferPointer { allTokens in
            let tokens = UnsafeBufferPointer(rebasing: allTokens[0..<ws.tokenCount])
            ws.keyBytes.withUnsafeBufferPointer { tokenBytes in
                lookup.keyBytes.withUnsafeBufferPointer { phraseBytes in
                    func bytes(_ t: PackedToken) -> UnsafeBufferPointer<UInt8> {
                        UnsafeBufferPointer(rebasing: tokenBytes[t.keyStart..<(t.keyStart + t.keyLength)])
                    }
                    func keyEquals(_ t: PackedToken, _ k: Int) -> Bool {
                        let key = lookup.keys[k]
                        if t.isASCII, key.isASCII {
                            guard t.hash == key.hash, t.keyLength == key.byteCount else { return false }
                            return KeyLookup.equal(UnsafeBufferPointer(rebasing: phraseBytes[key.byteStart..<(key.byteStart + key.byteCount)]), bytes(t))
                        }
                        if t.isASCII, !key.isASCII { return false }  // no ASCII string equals such a key
                        return ws.keyString(t) == lookup.keyStrings[k]
                    }
                    /// Whether `phrase` fits the words from `i`.
                    func fits(_ p: Int, at i: Int) -> Int? {
                        let phrase = lookup.phrases[p]
                        if phrase.requiresCapital, !tokens[i].isCapitalized { return nil }
                        let length = phrase.keyCount
                        guard i + length <= tokens.count else { return nil }
                        var j = 1
                        while j < length {
                            let previous = tokens[i + j - 1]
                            let next = tokens[i + j]
                            if !keyEquals(next, phrase.keyStart + j) || !TextTokenizer.isPhraseGap(s, from: previous.end, to: next.start) {
                                return nil
                            }
                            j += 1
                        }
                        return length
                    }
                    let count = tokens.count
                    var i = 0
                    while i < count {
                        let token = tokens[i]
                        let found: Int?
                        if token.isASCII {
                            found = lookup.entry(hash: token.hash, bytes: bytes(token))
                        } else {
                            found = lookup.byString[ws.nonASCIIKeys[token.keyStart]]
                        }
                        guard let found, !skip(i) else {
                            i += 1
                            continue
                        }
                        let entry = lookup.entries[found]
                        var matched: (length: Int, kind: IdentifierKind)?
                        if i + 1 >= count || tokens[i + 1].isASCII {
                            // Only phrases whose second key is the next word's (or one-word
                            // phrases, which come last) can fit.
                            if i + 1 < count, var b = lookup.bucket(entry: found, hash: tokens[i + 1].hash) {
                                while lookup.bucketPhrases[b] >= 0 {
                                    let p = lookup.bucketPhrases[b]
                                    if let length = fits(p, at: i) {
                                        matched = (length, lookup.phrases[p].kind)
                                        break
                                    }
                                    b += 1
                                }
                            }
                            if matched == nil {
                                for e in entry.singlesStart..<entry.phraseEnd {
                                    let p = lookup.entryPhrases[e]
                                    if let length = fits(p, at: i) {
                                        matched = (length, lookup.phrases[p].kind)
                                        break
                                    }
                                }
                            }
                        } else {
                            for e in entry.phraseStart..<entry.phraseEnd {
                                let p = lookup.entryPhrases[e]
                                if let length = fits(p, at: i) {
                                    matched = (length, lookup.phrases[p].kind)
                                    break
                                }
                            }
                        }
                        if let matched {
                            body(Match(firstToken: i, lastToken: i + matched.length - 1, kind: matched.kind))
                            i += matched.length
                        } else {
                            i += 1
                        }
                    }
                }
            }
        }
    }

    /// A set of numbers (phone digits, birth dates) probed with one multiplication, not SipHash.
    struct NumberSet: Sendable {
        private var slots: [UInt64]
        private var mask: Int
        private(set) var isEmpty: Bool
        /// Marks an empty slot; no phone number (below 10¹⁰) or birth-date key is this.
        private static let empty = UInt64.max

        init(_ numbers: [UInt64]) {
            var capacity = 16
            while capacity < numbers.count * 2 { capacity <<= 1 }
            mask = capacity - 1
            slots = [UInt64](repeating: Self.empty, count: capacity)
            isEmpty = numbers.isEmpty
            for number in numbers where number != Self.empty {
                var slot = Self.slot(number, mask)
                while slots[slot] != Self.empty && slots[slot] != number { slot = (slot + 1) & mask }
                slots[slot] = number
            }
        }

        @inline(__always)
        private static func slot(_ number: UInt64, _ mask: Int) -> Int {
            Int(truncatingIfNeeded: (number &* 0x9E37_79B9_7F4A_7C15) >> 20) & mask
        }

        @inline(__always)
        func contains(_ number: UInt64) -> Bool {
            slots.withUnsafeBufferPointer { slots in
                var slot = Self.slot(number, mask)
                while true {
                    let value = slots[slot]
                    if value == number { return number != Self.empty }
                    if value == Self.empty { return false }
                    slot = (slot + 1) & mask
                }
            }
        }
    }

    /// Whether one of the eight ASCII bytes of `word` is a digit (bytes 0x30–0x39).
    @inline(__always)
    static func hasDigit(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let low = word & (ones &* 127)
        // Per byte (all below 0x80): high bit of (127 + 0x3A - b) & (b + 127 - 0x2F) is set iff 0x2F < b < 0x3A.
        let belowUpper = ones &* (127 + 0x3A) &- low
        let aboveLower = low &+ ones &* (127 - 0x2F)
        return (belowUpper & ~word & aboveLower) & (ones &* 128) != 0
    }

    @inline(__always)
    private static func isLetter(_ v: UInt32) -> Bool {
        if v < 0x80 { return (v | 0x20) &- 0x61 < 26 }
        return Unicode.Scalar(v)?.properties.isAlphabetic ?? false
    }

    @inline(__always)
    private static func isPhoneGap<C: FixedWidthInteger & UnsignedInteger>(_ s: UnsafeBufferPointer<C>, from: Int, to: Int) -> Bool {
        guard to - from >= 1, to - from <= 3 else { return to == from }
        for i in from..<to {
            switch s[i] {
            case 0x20, 0x2D, 0x2E, 0x28, 0x29, 0x2B, 0xA0, 0x2F: continue
            default: return false
            }
        }
        return true
    }

    /// Whether the code units `s` hold a roster phone number (as ``phoneRanges(in:)`` finds
    /// them) and a roster birth date (as ``birthDateRanges(in:)`` does), in one pass over the
    /// runs of digits.
    func numericKinds<C: FixedWidthInteger & UnsignedInteger>(
        _ s: UnsafeBufferPointer<C>, groups: inout [(start: Int, end: Int)]
    ) -> (phone: Bool, birthDate: Bool) {
        var wantPhone = !phoneNumbers10.isEmpty || !phoneNumbers7.isEmpty
        var wantDate = !birthDayKeys.isEmpty
        var phone = false
        var date = false
        let n = s.count
        @inline(__always) func digit(_ k: Int) -> Bool { UInt32(s[k]) &- 0x30 < 10 }

        // Phone: groups of digits joined by short separators, as in `phoneRanges(in:)`.
        var groupCount = 0
        func flush() {
            defer { groupCount = 0 }
            guard groupCount > 0, wantPhone else { return }
            var total = 0
            for k in 0..<groupCount { total += groups[k].end - groups[k].start }
            guard total >= 7 else { return }  // a phone number has 7 digits or more
            for g in 0..<groupCount {
                var last10: UInt64 = 0
                var digits = 0
                for h in g..<groupCount {
                    for k in groups[h].start..<groups[h].end {
                        last10 = (last10 &* 10 &+ UInt64(UInt32(s[k]) &- 0x30)) % 10_000_000_000
                        digits += 1
                    }
                    if digits > 15 { break }
                    if (digits == 7 && phoneNumbers7.contains(last10)) || (digits >= 10 && phoneNumbers10.contains(last10)) {
                        phone = true
                        wantPhone = false
                        return
                    }
                }
            }
        }

        // Birth date: `a sep b sep c` starting at a run of digits, as in `birthDateRanges(in:)`;
        // after a complete date the search resumes at its end.
        var dateResume = 0
        func number(at i: Int) -> (value: Int, length: Int)? {
            var j = i
            var value = 0
            while j < n, j - i < 5, digit(j) {
                value = value * 10 + Int(UInt32(s[j]) &- 0x30)
                j += 1
            }
            return j > i ? (value, j - i) : nil
        }
        func hit(year: Int, month: Int, day: Int, short: Bool) -> Bool {
            let key = year &* 1_000_000 &+ (month &* 100 &+ day)
            let number = UInt64(bitPattern: Int64(key))
            return short ? birthDayShortKeys.contains(number) : birthDayKeys.contains(number)
        }
        func dateAt(_ i: Int) {
            guard let a = number(at: i), a.length <= 4, i + a.length < n else { return }
            let sep = s[i + a.length]
            guard sep == 0x2F || sep == 0x2D || sep == 0x2E, let b = number(at: i + a.length + 1), b.length <= 2 else { return }
            let cStart = i + a.length + 1 + b.length
            guard cStart < n, s[cStart] == sep, let c = number(at: cStart + 1), c.length <= 4 else { return }
            let end = cStart + 1 + c.length
            if end < n, digit(end) { return }
            let shortYear = c.length == 2 && a.length != 4
            if a.length == 4 {
                date = hit(year: a.value, month: b.value, day: c.value, short: shortYear)
            } else if c.length == 4 || c.length == 2 {
                date =
                    hit(year: c.value, month: a.value, day: b.value, short: shortYear)
                    || hit(year: c.value, month: b.value, day: a.value, short: shortYear)
            }
            if date { wantDate = false }
            dateResume = end
        }

        var i = 0
        while i < n, wantPhone || wantDate {
            guard digit(i) else {
                i += 1
                if C.bitWidth == 8, let base = s.baseAddress {
                    // Skip eight bytes at a time while none is a digit (ASCII lines only come as bytes).
                    let raw = UnsafeRawPointer(base)
                    while i + 8 <= n, !Self.hasDigit(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
                }
                continue
            }
            let start = i
            while i < n, digit(i) { i += 1 }
            if wantDate, start >= dateResume { dateAt(start) }
            guard wantPhone else { continue }
            if groupCount > 0, !Self.isPhoneGap(s, from: groups[groupCount - 1].end, to: start) { flush() }
            // Digits glued to letters (an MRN `A1234567`, `14T08`) are not part of a phone number.
            if (start > 0 && Self.isLetter(UInt32(s[start - 1]))) || (i < n && Self.isLetter(UInt32(s[i]))) {
                flush()
                continue
            }
            if groupCount < groups.count {
                groups[groupCount] = (start, i)
            } else {
                groups.append((start, i))
            }
            groupCount += 1
        }
        flush()
        return (phone, date)
    }
}
