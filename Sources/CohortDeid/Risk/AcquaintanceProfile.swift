import CohortCore

/// What someone who knows a participant can know from their records, and can look for in an
/// export (issue 27): the classes of devices they use, the kinds they record, roughly how many
/// days they were active, and — only where shifts keep them — the weekday and month of their
/// first record. Built from published rows, by the export (k-anonymity reaches k over these too)
/// and by `cohort deid risk` (which checks it), with the same texts.
///
/// Which of these carry a real signal: a shift by days (`whole_weeks: false`) is drawn evenly
/// over at least a week of values, so a published weekday says nothing about the real one, and
/// a published month says only that the real first record lies within `max_days` after it (a
/// window, not a class: stated in the docs, not counted here). Device classes (the protocol's
/// `records.source` map), kinds and active days are not shifted: an acquaintance who knows the
/// participant's watch, what they log and roughly how long they took part can look for exactly
/// these.
public struct AcquaintanceProfile: Sendable, Equatable {
    /// One kind's published local days, device classes (bits into ``sources``) and first record.
    private struct Entry: Sendable, Equatable {
        var kind: String
        var days = DaySet()
        var sourceBits: UInt64 = 0
        var first: Int64
        var firstOffset: Int32
    }

    /// Per kind, in the order the kinds first came. The export holds every included
    /// participant's profile at once (issue 28: ≤ 64 MB at bench L's 1,860 participants), so a
    /// profile is two arrays — its kinds (a few dozen bytes each, the days a bitmap held inline
    /// for a participant's months, ``DaySet``) and its device classes, each kind naming its own
    /// by bits — rather than a dictionary of kinds holding a hashed set of sources each (about
    /// 3 KB per participant, 5.8 MB at L).
    private var entries: [Entry] = []
    /// The device classes seen, in the order they came; an entry's bit `i` is `sources[i]`.
    private var sources: [String] = []
    /// Classes past the 64th (``Entry/sourceBits`` has a bit for the first 64), by entry index:
    /// nothing a real study has, kept so that no class is ever dropped.
    private var moreSources: [Int: Set<String>] = [:]

    /// Width in days of the active-days bands (roughly the quarters someone took part).
    package static let activeDaysBand = 90

    /// An empty profile.
    package init() {}

    /// The attribute names, in ``values(weekdayKept:)`` order. `weekdayKept`: the shifts keep
    /// weekdays (whole weeks) or there is no shift, so the first record's weekday and month are
    /// what an acquaintance knows.
    public static func attributes(weekdayKept: Bool) -> [String] {
        (weekdayKept ? ["first_record_weekday", "first_record_month"] : []) + ["device_class", "kinds", "active_days"]
    }

    /// The kinds with at least one record.
    public var kinds: Set<String> { Set(entries.map(\.kind)) }

    /// Adds one published record: its kind, start (milliseconds, written at `offsetSeconds`)
    /// and source (nil or empty: none).
    public mutating func add(kind: String, startMs: Int64, offsetSeconds: Int32, source: String?) {
        var slot = KindSlot(kind: kind)
        add(&slot, startMs: startMs, offsetSeconds: offsetSeconds, source: source)
    }

    /// Where one kind's records go in a profile, remembered from one record to the next: its
    /// entry, and the last device class with its bit. A caller that adds a run of one kind's
    /// records (the k-anonymity pass reads them kind by kind) finds the kind once per run instead
    /// of comparing kind names per record, and a class by `==` with the last one (the same string,
    /// record after record) instead of searching the classes (issue 28). Valid for the profile it
    /// was used with (entries and classes are only ever appended).
    package struct KindSlot: Sendable {
        let kind: String
        fileprivate var entry: Int?
        fileprivate var lastSource: String?
        fileprivate var lastBit = 0

        package init(kind: String) { self.kind = kind }
    }

    /// ``add(kind:startMs:offsetSeconds:source:)`` for `slot`'s kind, through the slot.
    package mutating func add(_ slot: inout KindSlot, startMs: Int64, offsetSeconds: Int32, source: String?) {
        let index: Int
        if let known = slot.entry {
            index = known
        } else if let found = entries.firstIndex(where: { $0.kind == slot.kind }) {
            index = found
        } else {
            index = entries.count
            entries.append(Entry(kind: slot.kind, first: startMs, firstOffset: offsetSeconds))
        }
        slot.entry = index
        entries[index].days.insert(TimeAttacks.localDay(startMs, offsetSeconds))
        if startMs < entries[index].first { (entries[index].first, entries[index].firstOffset) = (startMs, offsetSeconds) }
        guard let source, !source.isEmpty else { return }
        let bit: Int
        if let last = slot.lastSource, last == source {
            bit = slot.lastBit
        } else {
            bit = sources.firstIndex(of: source) ?? { sources.append(source); return sources.count - 1 }()
            (slot.lastSource, slot.lastBit) = (source, bit)
        }
        if bit < 64 { entries[index].sourceBits |= 1 << UInt64(bit) } else { moreSources[index, default: []].insert(source) }
    }

    /// The same profile in buffers of exactly its size: a profile grows by doubling while its
    /// records come, and the export holds every participant's (twice when it also profiles in
    /// UTC), so it keeps them trimmed (issue 28: the peak at bench L is the k-anonymity pass's).
    package func trimmed() -> AcquaintanceProfile {
        var copy = AcquaintanceProfile()
        copy.entries = entries.withUnsafeBufferPointer { Array($0) }
        for i in copy.entries.indices { copy.entries[i].days.trim() }
        copy.sources = sources.withUnsafeBufferPointer { Array($0) }
        copy.moreSources = moreSources
        return copy
    }

    /// The attribute texts: device classes and kinds as sorted `;`-joined sets, active days in
    /// bands of ``activeDaysBand`` (`0+`, `90+`, …), the first record's ISO weekday and month —
    /// of the records of `kinds` only (nil: every kind), with device classes left empty when
    /// `sources` is false (the export publishes no source).
    public func values(weekdayKept: Bool, kinds: Set<String>? = nil, sources: Bool = true) -> [String] {
        let kept = entries.indices.filter { kinds?.contains(entries[$0].kind) ?? true }
        var result: [String] = []
        if weekdayKept {
            // The earliest record of the kept kinds (the earlier offset on a tie: one answer
            // whatever order the kinds came in).
            let first = kept.map { (entries[$0].first, entries[$0].firstOffset) }.min { $0 < $1 }
            let date = first.map { CivilDate(daysSinceEpoch: TimeAttacks.localDay($0.0, $0.1)) }
            result += [date.map { String($0.isoWeekday) } ?? "", date.map { String($0.month) } ?? ""]
        }
        var classes = Set<String>()
        if sources {
            for i in kept {
                var bits = entries[i].sourceBits
                while bits != 0 {
                    classes.insert(self.sources[bits.trailingZeroBitCount])
                    bits &= bits - 1
                }
                classes.formUnion(moreSources[i] ?? [])
            }
        }
        var days = DaySet()
        for i in kept { days.formUnion(entries[i].days) }
        return result + [
            classes.sorted().joined(separator: ";"), kept.map { entries[$0].kind }.sorted().joined(separator: ";"),
            String(days.count / Self.activeDaysBand * Self.activeDaysBand) + "+",
        ]
    }
}

/// A set of day numbers as a bitmap over the words that hold them (64 days a word, from the
/// word of the earliest day). The first three words (a participant's few months) are held
/// inline; only a longer span allocates.
struct DaySet: Sendable, Equatable {
    /// The first day of word 0 (a multiple of 64); meaningful once a day is in.
    private var base = 0
    private var w0: UInt64 = 0
    private var w1: UInt64 = 0
    private var w2: UInt64 = 0
    /// Words 3, 4, …
    private var more: [UInt64] = []
    private var isEmpty = true

    /// How many days the set holds.
    var count: Int { w0.nonzeroBitCount + w1.nonzeroBitCount + w2.nonzeroBitCount + more.reduce(0) { $0 + $1.nonzeroBitCount } }

    mutating func insert(_ day: Int) {
        let wordBase = (day >> 6) << 6  // rounds down, negative days too
        if isEmpty {
            base = wordBase
            isEmpty = false
        } else if wordBase < base {
            setWords(Array(repeating: 0, count: (base - wordBase) >> 6) + words)
            base = wordBase
        }
        let index = (day - base) >> 6
        let bit: UInt64 = 1 << UInt64(day - base - (index << 6))
        switch index {
        case 0: w0 |= bit
        case 1: w1 |= bit
        case 2: w2 |= bit
        default:
            if index - 3 >= more.count { more.append(contentsOf: repeatElement(0, count: index - 3 - more.count + 1)) }
            more[index - 3] |= bit
        }
    }

    mutating func formUnion(_ other: DaySet) {
        for (i, word) in other.words.enumerated() where word != 0 {
            for bit in 0..<64 where word & (1 << UInt64(bit)) != 0 { insert(other.base + (i << 6) + bit) }
        }
    }

    /// The same days: a set's first word starts at its earliest day's word however it was
    /// built, but growing downwards can leave zero words at its end, so those are not compared.
    static func == (lhs: DaySet, rhs: DaySet) -> Bool {
        guard lhs.isEmpty == rhs.isEmpty else { return false }
        if lhs.isEmpty { return true }
        func trimmed(_ words: [UInt64]) -> ArraySlice<UInt64> { words[..<((words.lastIndex { $0 != 0 } ?? -1) + 1)] }
        return lhs.base == rhs.base && trimmed(lhs.words) == trimmed(rhs.words)
    }

    /// The words past the third in a buffer of exactly their number.
    mutating func trim() {
        if more.capacity > more.count { more = more.withUnsafeBufferPointer { Array($0) } }
    }

    /// Every word, from word 0.
    private var words: [UInt64] { isEmpty ? [] : [w0, w1, w2] + more }

    private mutating func setWords(_ words: [UInt64]) {
        w0 = words.count > 0 ? words[0] : 0
        w1 = words.count > 1 ? words[1] : 0
        w2 = words.count > 2 ? words[2] : 0
        more = words.count > 3 ? Array(words[3...]) : []
    }
}
