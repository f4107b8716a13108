extension IdentifierIndex {
    /// The roster's phrases as they are collected, in flat arrays: each distinct key once (its
    /// text and an id), each phrase once per (keys, kind) as a run of key ids, found again through
    /// an open-addressing table of phrase numbers.
    ///
    /// A phrase costs about 20 bytes and no allocation of its own, and every array grows by
    /// doubling: collecting a roster of thousands leaves a few large blocks, which go back to the
    /// system when freed, rather than tens of thousands of small ones scattered through the heap
    /// (measured: the export's resident memory fell by about 2 KB per participant, see
    /// docs/performance.md).
    struct PhraseTable: Sendable {
        /// Every distinct key, by id (keys that are equal as strings share one id).
        private(set) var keyTexts: [String] = []
        private var keyIDs: [String: Int32] = [:]
        /// Phrase `p`'s key ids are `phraseKeyIDs[starts[p]..<starts[p + 1]]`.
        private(set) var phraseKeyIDs: [Int32] = []
        private(set) var starts: [Int32] = [0]
        private(set) var kinds: [IdentifierKind] = []
        /// Matched only when the first word is capitalized in the text (nicknames).
        private(set) var requiresCapital: [Bool] = []
        /// Phrase numbers by (keys, kind) hash, -1 for an empty slot; a power of two, at least
        /// twice the phrase count.
        private var slots: [Int32] = []

        /// Phrases collected, in the order they were first added.
        var count: Int { kinds.count }

        /// The number of keys of phrase `p`.
        func keyCount(_ p: Int) -> Int { Int(starts[p + 1] - starts[p]) }

        /// The key ids of phrase `p`.
        func keyIDs(of p: Int) -> ArraySlice<Int32> { phraseKeyIDs[Int(starts[p])..<Int(starts[p + 1])] }

        /// The id of phrase `p`'s first key.
        func firstKeyID(_ p: Int) -> Int { Int(phraseKeyIDs[Int(starts[p])]) }

        /// Adds the phrase `keys` unless a phrase with the same keys and kind was added before
        /// (the first one added stays, with its `requiresCapital`).
        mutating func insert(_ keys: [String], _ kind: IdentifierKind, requiresCapital capital: Bool) {
            // A phrase of more than 65,535 words (a compiled phrase counts its keys in 16 bits)
            // is no identifier anyone writes; it is not collected.
            guard !keys.isEmpty, keys.count <= Int(UInt16.max) else { return }
            let start = phraseKeyIDs.count
            for key in keys { phraseKeyIDs.append(intern(key)) }
            if slots.count < (count + 1) * 2 { rehash(capacity: max(64, slots.count * 2)) }
            let mask = slots.count - 1
            var slot = Int(truncatingIfNeeded: hash(start..<phraseKeyIDs.count, kind)) & mask
            while slots[slot] >= 0 {
                let other = Int(slots[slot])
                if kinds[other] == kind && keyIDs(of: other).elementsEqual(phraseKeyIDs[start...]) {
                    phraseKeyIDs.removeLast(keys.count)
                    return
                }
                slot = (slot + 1) & mask
            }
            slots[slot] = Int32(count)
            starts.append(Int32(phraseKeyIDs.count))
            kinds.append(kind)
            requiresCapital.append(capital)
        }

        /// Lets go of the tables that find keys and phrases again (the collection is complete).
        mutating func close() {
            keyIDs = [:]
            slots = []
        }

        private mutating func intern(_ key: String) -> Int32 {
            if let id = keyIDs[key] { return id }
            let id = Int32(keyTexts.count)
            keyTexts.append(key)
            keyIDs[key] = id
            return id
        }

        private func hash(_ range: Range<Int>, _ kind: IdentifierKind) -> UInt64 {
            var h: UInt64 = 0xCBF2_9CE4_8422_2325 ^ UInt64(kind.hashValue & 0xFF)
            for i in range {
                h = (h ^ UInt64(UInt32(bitPattern: phraseKeyIDs[i]))) &* 0x0000_0100_0000_01B3
            }
            return h ^ (h >> 29)
        }

        private mutating func rehash(capacity: Int) {
            slots = [Int32](repeating: -1, count: capacity)
            let mask = capacity - 1
            for p in 0..<count {
                var slot = Int(truncatingIfNeeded: hash(Int(starts[p])..<Int(starts[p + 1]), kinds[p])) & mask
                while slots[slot] >= 0 { slot = (slot + 1) & mask }
                slots[slot] = Int32(p)
            }
        }
    }
}
