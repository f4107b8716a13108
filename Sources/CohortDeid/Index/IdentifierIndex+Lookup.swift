import Foundation

extension IdentifierIndex {
    /// The phrase table compiled for lookups without allocation or reference counting: flat
    /// arrays of 32-bit offsets sized exactly, an open-addressing table of ASCII first-key hashes
    /// (one probe per word, whatever the roster size), and per first key the phrases bucketed by
    /// their second key, so a word that starts many phrases (a common first name) costs one more
    /// probe, not one comparison per participant. Each distinct key is kept once, as ASCII bytes
    /// in one arena, and phrases name their keys by id; the rare key no ASCII string equals is
    /// kept as a `String` and compared as strings compare.
    struct KeyLookup: Sendable {
        struct PhraseKey: Sendable {
            var hash: UInt64
            var byteStart: Int32
            /// Bytes in `keyBytes`; -1: the key has no ASCII form (see `nonASCIIKeys`).
            var byteCount: Int32
            var isASCII: Bool { byteCount >= 0 }
        }

        struct CompiledPhrase: Sendable {
            var keyStart: Int32
            var keyCount: UInt16
            var kind: IdentifierKind
            var requiresCapital: Bool
        }

        struct Entry: Sendable {
            /// The first key's ASCII form in `keyBytes` (count -1: none).
            var asciiStart: Int32
            var asciiCount: Int32
            /// Phrases `phraseStart..<phraseEnd` of `phrases` (each entry's are stored together), in ``Source/phrasesByFirstKey()`` order
            /// (longest first); the one-word phrases are the tail from `singlesStart`.
            var phraseStart: Int32
            var singlesStart: Int32
            var phraseEnd: Int32
        }

        private(set) var entries: [Entry] = []
        /// First keys without an ASCII form → entry.
        private(set) var nonASCIIEntries: [String: Int] = [:]
        private(set) var phrases: [CompiledPhrase] = []
        /// Every distinct key once, by id.
        private(set) var keys: [PhraseKey] = []
        /// Phrase keys as ids in `keys`: phrase `p`'s are `phraseKeys[keyStart..<keyStart + keyCount]`.
        private(set) var phraseKeys: [Int32] = []
        /// Keys without an ASCII form, by id.
        private(set) var nonASCIIKeys: [Int: String] = [:]
        private(set) var keyBytes: [UInt8] = []
        /// Phrase indices bucketed by (entry, ASCII second key), each bucket in phrase order and
        /// ended by -1.
        private(set) var bucketPhrases: [Int32] = []
        private var firstKeys = HashSlots()
        /// One bit per first-key hash (bits 16–31): most words are rejected here, in a table
        /// small enough to stay in the first-level cache, before the slots are touched.
        private var firstKeyFilter = [UInt64](repeating: 0, count: 1 << 10)
        private var buckets = HashSlots()

        /// An open-addressing map from a 64-bit hash plus a tag to an index. A slot is 8 bytes: the
        /// hash's high 32 bits and the index, so one cache line holds eight; a candidate whose
        /// stored bits match is confirmed by `accept`, which compares what the index names.
        struct HashSlots: Sendable {
            struct Slot: Sendable {
                var hash: UInt32 = 0
                /// -1: empty.
                var value: Int32 = -1
            }

            var slots: [Slot] = []
            var mask = 0

            init(capacityFor count: Int = 0) {
                var capacity = 16
                while capacity < count * 2 { capacity <<= 1 }
                mask = capacity - 1
                slots = [Slot](repeating: Slot(), count: capacity)
            }

            @inline(__always)
            private func start(_ hash: UInt64, _ tag: Int) -> Int {
                Int(truncatingIfNeeded: hash ^ UInt64(truncatingIfNeeded: tag) &* 0x9E37_79B9_7F4A_7C15) & mask
            }

            mutating func insert(hash: UInt64, tag: Int, value: Int) {
                var slot = start(hash, tag)
                while slots[slot].value >= 0 { slot = (slot + 1) & mask }
                slots[slot] = Slot(hash: UInt32(truncatingIfNeeded: hash >> 32), value: Int32(value))
            }

            /// Calls `accept` on each value stored under `hash` and `tag` (and on values whose hash
            /// shares its high 32 bits) until it returns true.
            @inline(__always)
            func find(hash: UInt64, tag: Int, _ accept: (Int) -> Bool) -> Int? {
                let high = UInt32(truncatingIfNeeded: hash >> 32)
                return slots.withUnsafeBufferPointer { slots in
                    var slot = start(hash, tag)
                    while true {
                        let entry = slots[slot]
                        if entry.value < 0 { return nil }
                        if entry.hash == high, accept(Int(entry.value)) { return Int(entry.value) }
                        slot = (slot + 1) & mask
                    }
                }
            }
        }

        init(_ table: PhraseTable) {
            addKeys(table)
            let (groupStart, grouped) = Self.groupedByFirstKey(table, keyCount: keys.count)
            let firstKeyIDs = (0..<keys.count).filter { groupStart[$0 + 1] > groupStart[$0] }.sorted {
                table.keyTexts[$0].utf8.lexicographicallyPrecedes(table.keyTexts[$1].utf8)
            }
            entries.reserveCapacity(firstKeyIDs.count)
            phrases.reserveCapacity(table.count)
            phraseKeys.reserveCapacity(table.phraseKeyIDs.count)
            var bucketLists: [(entry: Int, hash: UInt64, phrases: [Int32])] = []
            for first in firstKeyIDs {
                addEntry(first, phrases: Array(grouped[Int(groupStart[first])..<Int(groupStart[first + 1])]), table, &bucketLists)
            }
            hashEntries()
            hashBuckets(bucketLists)
        }

        /// Each distinct key once: its hash and ASCII bytes (or its text, when no ASCII string
        /// equals it); phrases name their keys by id.
        private mutating func addKeys(_ table: PhraseTable) {
            keys.reserveCapacity(table.keyTexts.count)
            keyBytes.reserveCapacity(table.keyTexts.reduce(0) { $0 + $1.utf8.count })
            for (id, key) in table.keyTexts.enumerated() {
                if let ascii = KeyLookup.asciiForm(key) {
                    keys.append(PhraseKey(hash: TextTokenizer.hash(asciiKey: ascii), byteStart: Int32(keyBytes.count), byteCount: Int32(ascii.count)))
                    keyBytes += ascii
                } else {
                    keys.append(PhraseKey(hash: 0, byteStart: 0, byteCount: -1))
                    nonASCIIKeys[id] = key
                }
            }
        }

        /// The phrases grouped by first key, each group in the order added (a counting sort):
        /// group `id` is `grouped[groupStart[id]..<groupStart[id + 1]]`.
        private static func groupedByFirstKey(_ table: PhraseTable, keyCount: Int) -> (groupStart: [Int32], grouped: [Int32]) {
            var groupStart = [Int32](repeating: 0, count: keyCount + 1)
            for p in 0..<table.count { groupStart[table.firstKeyID(p) + 1] += 1 }
            for id in 0..<keyCount { groupStart[id + 1] += groupStart[id] }
            var grouped = [Int32](repeating: 0, count: table.count)
            var next = groupStart
            for p in 0..<table.count {
                let first = table.firstKeyID(p)
                grouped[Int(next[first])] = Int32(p)
                next[first] += 1
            }
            return (groupStart, grouped)
        }

        /// The entry of first key `first` and its phrases (longest first, as they are matched);
        /// phrases of two or more words join the bucket of their second key's hash.
        private mutating func addEntry(
            _ first: Int, phrases list: [Int32], _ table: PhraseTable, _ bucketLists: inout [(entry: Int, hash: UInt64, phrases: [Int32])]
        ) {
            let entry = entries.count
            let phraseStart = phrases.count
            var singlesStart: Int?
            var bucketOf: [UInt64: Int] = [:]
            var list = list
            list.sort { table.keyCount(Int($0)) > table.keyCount(Int($1)) }
            for p in list.map({ Int($0) }) {
                let keyStart = phraseKeys.count
                phraseKeys += table.keyIDs(of: p)
                let index = Int32(phrases.count)
                let keyCount = table.keyCount(p)
                phrases.append(
                    CompiledPhrase(keyStart: Int32(keyStart), keyCount: UInt16(keyCount), kind: table.kinds[p], requiresCapital: table.requiresCapital[p]))
                if keyCount == 1 {
                    if singlesStart == nil { singlesStart = Int(index) }
                } else if keys[Int(phraseKeys[keyStart + 1])].isASCII {
                    let h = keys[Int(phraseKeys[keyStart + 1])].hash
                    if let b = bucketOf[h] {
                        bucketLists[b].phrases.append(index)
                    } else {
                        bucketOf[h] = bucketLists.count
                        bucketLists.append((entry, h, [index]))
                    }
                }
            }
            let key = keys[first]
            if !key.isASCII { nonASCIIEntries[table.keyTexts[first]] = entry }
            entries.append(
                Entry(
                    asciiStart: key.byteStart, asciiCount: key.byteCount, phraseStart: Int32(phraseStart),
                    singlesStart: Int32(singlesStart ?? phrases.count), phraseEnd: Int32(phrases.count)))
        }

        /// The ASCII first keys by hash, and their bit in the pre-filter.
        private mutating func hashEntries() {
            firstKeys = HashSlots(capacityFor: entries.count)
            for (index, entry) in entries.enumerated() where entry.asciiCount >= 0 {
                let bytes = keyBytes[Int(entry.asciiStart)..<Int(entry.asciiStart + entry.asciiCount)]
                let hash = TextTokenizer.hash(asciiKey: bytes)
                firstKeys.insert(hash: hash, tag: 0, value: index)
                let bit = Int(truncatingIfNeeded: hash >> 16) & 0xFFFF
                firstKeyFilter[bit >> 6] |= 1 << UInt64(bit & 63)
            }
        }

        /// The buckets by (second key's hash, entry); each bucket's phrases end at a -1.
        private mutating func hashBuckets(_ bucketLists: [(entry: Int, hash: UInt64, phrases: [Int32])]) {
            buckets = HashSlots(capacityFor: bucketLists.count)
            bucketPhrases.reserveCapacity(bucketLists.reduce(0) { $0 + $1.phrases.count + 1 })
            for bucket in bucketLists {
                // value: start in bucketPhrases; the bucket ends at the next -1.
                buckets.insert(hash: bucket.hash, tag: bucket.entry, value: bucketPhrases.count)
                bucketPhrases += bucket.phrases
                bucketPhrases.append(-1)
            }
        }

        /// The ASCII bytes equal (as a `String`) to `key`, or nil when no ASCII string equals it.
        static func asciiForm(_ key: String) -> [UInt8]? {
            if isASCII(key) { return Array(key.utf8) }
            // A string equals an ASCII one only when its canonical composition is ASCII
            // (e.g. a KELVIN SIGN left by folding).
            let composed = key.precomposedStringWithCanonicalMapping
            guard isASCII(composed), composed == key else { return nil }
            return Array(composed.utf8)
        }

        /// The entry whose first key equals `key` (as strings compare).
        func entry(forKey key: String) -> Int? {
            if Self.isASCII(key) {
                var key = key
                return key.withUTF8 { entry(hash: TextTokenizer.hash(asciiKey: $0), bytes: $0) }
            }
            // A non-ASCII key equals an ASCII first key only through its ASCII form.
            if let ascii = Self.asciiForm(key) {
                return ascii.withUnsafeBufferPointer { entry(hash: TextTokenizer.hash(asciiKey: $0), bytes: $0) }
            }
            return nonASCIIEntries[key]
        }

        /// Whether the key at `k` in `phraseKeys` equals `string` (as strings compare).
        func key(_ k: Int, equals string: String) -> Bool {
            let id = Int(phraseKeys[k])
            let key = keys[id]
            guard key.isASCII else { return nonASCIIKeys[id] == string }
            func stored(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
                keyBytes.withUnsafeBufferPointer {
                    Self.equal(UnsafeBufferPointer(rebasing: $0[Int(key.byteStart)..<Int(key.byteStart + key.byteCount)]), bytes)
                }
            }
            if Self.isASCII(string) {
                var string = string
                return string.withUTF8 { stored($0) }
            }
            guard let form = Self.asciiForm(string) else { return false }
            return form.withUnsafeBufferPointer { stored($0) }
        }

        private static func isASCII(_ string: String) -> Bool { string.utf8.allSatisfy { $0 < 0x80 } }

        /// The entry whose first key is the ASCII key `bytes` (hash `hash`).
        @inline(__always)
        func entry(hash: UInt64, bytes: UnsafeBufferPointer<UInt8>) -> Int? {
            let bit = Int(truncatingIfNeeded: hash >> 16) & 0xFFFF
            guard firstKeyFilter[bit >> 6] & (1 << UInt64(bit & 63)) != 0 else { return nil }
            return firstKeys.find(hash: hash, tag: 0) { index in
                let entry = entries[index]
                return Int(entry.asciiCount) == bytes.count
                    && keyBytes.withUnsafeBufferPointer {
                        Self.equal(UnsafeBufferPointer(rebasing: $0[Int(entry.asciiStart)..<Int(entry.asciiStart + entry.asciiCount)]), bytes)
                    }
            }
        }

        /// Where in `bucketPhrases` the phrases of `entry` with ASCII second key hash `hash` start.
        /// A bucket is confirmed by its first phrase: one of the entry's, with that second key.
        @inline(__always)
        func bucket(entry: Int, hash: UInt64) -> Int? {
            let owner = entries[entry]
            return buckets.find(hash: hash, tag: entry) { start in
                let p = Int(bucketPhrases[start])
                guard p >= Int(owner.phraseStart), p < Int(owner.phraseEnd) else { return false }
                return keys[Int(phraseKeys[Int(phrases[p].keyStart) + 1])].hash == hash
            }
        }

        @inline(__always)
        static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
            guard a.count == b.count else { return false }
            for i in 0..<a.count where a[i] != b[i] { return false }
            return true
        }
    }

    /// The identifier phrases among the words of a ``LineWorkspace`` (leftmost, longest first;
    /// no overlaps): the one phrase matcher of the scrubber and the scanner. `s` is the text the
    /// words were found in (its gaps decide whether words are one phrase); `skip` is asked only
    /// for words that start a phrase; `accept` may refuse a phrase that fits (the scrubber's
    /// context rules), and the next shorter phrase at the same word is tried then.
    func matches<C: FixedWidthInteger & UnsignedInteger>(
        scalars s: UnsafeBufferPointer<C>, workspace ws: LineWorkspace, skip: (Int) -> Bool,
        accept: (Match) -> Bool = { _ in true }, _ body: (Match) -> Void
    ) {
        let lookup = self.lookup
        guard !lookup.entries.isEmpty else { return }
        ws.tokens.withUnsafeBufferPointer { allTokens in
            ws.keyBytes.withUnsafeBufferPointer { tokenBytes in
                lookup.keyBytes.withUnsafeBufferPointer { phraseBytes in
                    let matcher = PhraseMatcher(
                        lookup: lookup, workspace: ws, text: s, tokens: UnsafeBufferPointer(rebasing: allTokens[0..<ws.tokenCount]),
                        tokenBytes: tokenBytes, phraseBytes: phraseBytes)
                    matcher.forEachMatch(skip: skip, accept: accept, body)
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

    /// Whether the code units `s` hold a roster phone number and a roster birth date (see
    /// ``numericMatches(_:groups:firstOnly:_:)``).
    func numericKinds<C: FixedWidthInteger & UnsignedInteger>(
        _ s: UnsafeBufferPointer<C>, groups: inout [(start: Int, end: Int)]
    ) -> (phone: Bool, birthDate: Bool) {
        var phone = false
        var date = false
        numericMatches(s, groups: &groups, firstOnly: true) { _, kind in
            if kind == .phone { phone = true } else { date = true }
        }
        return (phone, date)
    }

    /// The roster phone numbers and birth dates written with digits in the code units `s`, in one
    /// pass over the runs of digits: the one numeric matcher of the scrubber and the scanner.
    ///
    /// - A phone is a run of digit groups joined by short phone separators (` -.()+/`, a no-break
    ///   space; at most three between groups) and not glued to letters (an MRN `A1234567`), from
    ///   any group on, whose 7–10 digits equal one of ``Source/phoneSuffixes`` of that length, or
    ///   whose 11–15 digits end in a 10-digit one (a country code); reported as the longest such
    ///   run from its first group, and the search goes on after it.
    /// - A birth date is `a sep b sep c` (`1980-03-14`, `03/14/1980`, `14.03.1980`, `3/14/80`;
    ///   sep one of `/-.`) starting at a run of digits and equal to a roster birth date (two-digit
    ///   years only against two-digit years); the search resumes after any complete date.
    ///
    /// `body` gets each match's code-unit range and kind (`.phone` or `.birthDate`), phones and
    /// dates each in text order; with `firstOnly`, the search for a kind stops at its first match.
    func numericMatches<C: FixedWidthInteger & UnsignedInteger>(
        _ s: UnsafeBufferPointer<C>, groups: inout [(start: Int, end: Int)], firstOnly: Bool, _ body: (Range<Int>, IdentifierKind) -> Void
    ) {
        var wantPhone = !phoneSuffixNumbers.isEmpty
        var wantDate = !birthDayKeys.isEmpty
        let n = s.count
        // Phone: groups of digits joined by short separators, reported when the run of groups ends.
        var groupCount = 0
        func flush() {
            defer { groupCount = 0 }
            guard groupCount > 0, wantPhone else { return }
            if reportPhones(s, groups: groups, count: groupCount, firstOnly: firstOnly, body), firstOnly { wantPhone = false }
        }
        // Birth date: after a complete date the search resumes at its end.
        var dateResume = 0
        var i = 0
        while i < n, wantPhone || wantDate {
            guard Self.isDigit(s[i]) else {
                i += 1
                if C.bitWidth == 8, let base = s.baseAddress {
                    // Skip eight bytes at a time while none is a digit (ASCII lines only come as bytes).
                    let raw = UnsafeRawPointer(base)
                    while i + 8 <= n, !Self.hasDigit(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
                }
                continue
            }
            let start = i
            while i < n, Self.isDigit(s[i]) { i += 1 }
            if wantDate, start >= dateResume, let date = dateForm(s, at: start) {
                if date.isBirthDate {
                    body(date.range, .birthDate)
                    if firstOnly { wantDate = false }
                }
                dateResume = date.range.upperBound
            }
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
    }

    @inline(__always)
    private static func isDigit<C: FixedWidthInteger & UnsignedInteger>(_ c: C) -> Bool { UInt32(c) &- 0x30 < 10 }

    /// Reports the roster phones in the run of digit groups `groups[0..<count]`: from each group
    /// on, the longest run whose digits are a roster phone (see
    /// ``numericMatches(_:groups:firstOnly:_:)``); returns whether one was reported.
    private func reportPhones<C: FixedWidthInteger & UnsignedInteger>(
        _ s: UnsafeBufferPointer<C>, groups: [(start: Int, end: Int)], count groupCount: Int, firstOnly: Bool,
        _ body: (Range<Int>, IdentifierKind) -> Void
    ) -> Bool {
        var total = 0
        for k in 0..<groupCount { total += groups[k].end - groups[k].start }
        guard total >= 7 else { return false }  // a phone number has 7 digits or more
        var reported = false
        var g = 0
        while g < groupCount {
            guard let found = phoneEnd(s, groups: groups, from: g, count: groupCount, firstOnly: firstOnly) else {
                g += 1
                continue
            }
            body(groups[g].start..<groups[found].end, .phone)
            reported = true
            if firstOnly { return true }
            g = found + 1
        }
        return reported
    }

    /// The last group of the longest run of groups from `g` whose digits are a roster phone:
    /// 7–10 digits, the phone's last as many digits; more (a country code, at most 15), its last 10.
    private func phoneEnd<C: FixedWidthInteger & UnsignedInteger>(
        _ s: UnsafeBufferPointer<C>, groups: [(start: Int, end: Int)], from g: Int, count groupCount: Int, firstOnly: Bool
    ) -> Int? {
        var last10: UInt64 = 0
        var digits = 0
        var found: Int?
        var h = g
        while h < groupCount {
            for k in groups[h].start..<groups[h].end {
                last10 = (last10 &* 10 &+ UInt64(UInt32(s[k]) &- 0x30)) % 10_000_000_000
                digits += 1
            }
            if digits > 15 { break }
            if digits >= 7, phoneSuffixNumbers.contains(Self.phoneSuffixKey(digits: min(digits, 10), value: last10)) {
                found = h
                if firstOnly { break }
            }
            h += 1
        }
        return found
    }

    /// The number of at most five digits at `i`, and its length.
    private static func number<C: FixedWidthInteger & UnsignedInteger>(_ s: UnsafeBufferPointer<C>, at i: Int) -> (value: Int, length: Int)? {
        var j = i
        var value = 0
        while j < s.count, j - i < 5, isDigit(s[j]) {
            value = value * 10 + Int(UInt32(s[j]) &- 0x30)
            j += 1
        }
        return j > i ? (value, j - i) : nil
    }

    /// The date written `a sep b sep c` at `i` (sep one of `/-.`, the same twice; not followed by
    /// a digit), and whether it is a roster birth date (two-digit years only against two-digit
    /// years), or nil when no complete date starts there.
    private func dateForm<C: FixedWidthInteger & UnsignedInteger>(_ s: UnsafeBufferPointer<C>, at i: Int) -> (range: Range<Int>, isBirthDate: Bool)? {
        let n = s.count
        guard let a = Self.number(s, at: i), a.length <= 4, i + a.length < n else { return nil }
        let sep = s[i + a.length]
        guard sep == 0x2F || sep == 0x2D || sep == 0x2E, let b = Self.number(s, at: i + a.length + 1), b.length <= 2 else { return nil }
        let cStart = i + a.length + 1 + b.length
        guard cStart < n, s[cStart] == sep, let c = Self.number(s, at: cStart + 1), c.length <= 4 else { return nil }
        let end = cStart + 1 + c.length
        if end < n, Self.isDigit(s[end]) { return nil }
        let short = c.length == 2 && a.length != 4
        func hit(year: Int, month: Int, day: Int) -> Bool {
            let key = Self.dateKey(year: year, monthDay: month &* 100 &+ day)
            return short ? birthDayShortKeys.contains(key) : birthDayKeys.contains(key)
        }
        var date = false
        if a.length == 4 {
            date = hit(year: a.value, month: b.value, day: c.value)
        } else if c.length == 4 || c.length == 2 {
            date = hit(year: c.value, month: a.value, day: b.value) || hit(year: c.value, month: b.value, day: a.value)
        }
        return (i..<end, date)
    }
}
