import CohortCore
public import Foundation

/// The words free text may keep: the scrubber's allow-list (see ``Scrubber``, "Allow-list").
///
/// A word is **safe** when its folded key (``TextTokenizer``: lower case, accents and
/// apostrophes removed) is
/// - a lower-case entry of a real English dictionary (Debian's `wamerican-large`:
///   `/usr/share/dict/american-english-large`) — capitalised entries are proper nouns (names,
///   places) and are *not* safe; entries of one or two letters are not taken from it (it lists
///   every initial and abbreviation, `mk`, `jo`), the short words English needs are listed here;
/// - a lower-case entry of a medical dictionary (Debian's `hunspell-en-med`:
///   `/usr/share/hunspell/en_med_glut.dic`, affix flags ignored);
/// - cohort's ``ClinicalVocabulary`` (eponyms, anatomy, drugs, months and weekdays), the routes,
///   units and abbreviations listed here;
/// - a word of the study protocol's own vocabulary (kinds, units, medication names), added with
///   ``adding(_:)``.
///
/// **Read at run time, not compiled in.** The two word lists are 2.7 MB of text maintained by
/// Debian; compiling them into the binary would make every build slower and freeze a copy that
/// security updates of the word lists never reach. They are read once per process (about 0.2 s)
/// from the Debian package paths, or from the folder named by `COHORT_DICTIONARY_DIR`
/// (holding `american-english-large` and `en_med_glut.dic`), and kept as one open-addressing
/// table: a word costs one hash probe (the tokenizer's key hash) and one byte comparison. A
/// missing word list is an error that names the package to install: scrubbing without it
/// would redact every word.
///
/// Besides the safe set, the vocabulary knows which safe words are also proper nouns
/// (`Will`, `Hope`, `Mark`: both a lower-case and a capitalised entry): a capitalised one is
/// kept unless the text says "person" (see ``Scrubber``).
public struct SafeVocabulary: Sendable {
    let words: WordTable
    /// Safe words that the dictionary also lists capitalised (personal names, places).
    let properNouns: WordTable
    /// Protocol words added with ``adding(_:)``.
    private(set) var extra: Set<String> = []

    /// The Debian paths of the two word lists.
    package static let englishWordListPath = "/usr/share/dict/american-english-large"
    package static let medicalWordListPath = "/usr/share/hunspell/en_med_glut.dic"

    /// The short words (one or two letters) that are safe; the dictionary's own are not taken.
    static let shortWords: Set<String> = [
        "a", "i", "x", "id", "am", "an", "as", "at", "be", "by", "do", "go", "he", "hi", "if", "in", "is", "it", "me", "my", "no", "of",
        "oh", "ok", "on", "or", "so", "to", "up", "us", "we", "ah", "eh", "uh", "um", "ow", "ex", "ie", "eg", "vs", "pm", "mg",
        "ml", "kg", "cm", "mm", "km", "lb", "oz", "hr", "er", "iv", "gp", "bp", "hb", "im", "po", "sc", "od", "bd", "qd", "mr",
        "ms", "dr", "pt", "st", "nd", "rd", "th", "tv", "uk", "us", "eu", "pr", "re", "ct", "ph", "dl", "mo", "yo", "wk", "yr",
        "hrs", "ll", "ve", "s", "t", "d", "m", "si", "gi", "ot", "mo", "av", "ac", "dc", "ii", "iv", "vi",
    ]

    /// Clinical abbreviations, routes, frequencies, units and app words that dictionaries miss.
    static let listed: Set<String> = [
        "mri", "ecg", "ekg", "eeg", "emg", "nsaid", "nsaids", "crp", "esr", "hla", "b27", "hlab27", "basdai", "basfi", "asdas",
        "bmi", "bpm", "hrv", "sdnn", "rmssd", "spo2", "mmhg", "mcg", "ug", "mls", "iu", "units", "prn", "bid", "tid", "qid",
        "qhs", "nocte", "mane", "stat", "subcut", "subq", "sq", "oral", "orally", "inj", "tab", "tabs", "caps", "cap", "puff",
        "puffs", "ibd", "ibs", "uti", "copd", "gerd", "adhd", "ptsd", "ocd", "covid", "covid19", "flu", "rsv", "hiv", "ed",
        "icu", "opd", "gi", "ent", "ot", "pt", "physio", "rheum", "rheumy", "rheumatologist", "app", "apps", "wifi", "bluetooth",
        "ios", "android", "iphone", "ipad", "fitbit", "garmin", "oura", "whoop", "withings", "dexcom", "libre", "applewatch",
        "smartwatch", "wearable", "wearables", "sync", "synced", "syncing", "resync", "login", "logout", "email", "emails",
        "emailed", "texted", "online", "offline", "selfie", "wk", "wks", "yrs", "mins", "min", "secs", "sec", "hrs", "approx",
        "etc", "ok", "okay", "ugh", "hmm", "lol", "omg", "btw", "fyi", "asap", "thx", "pls", "plz", "tho", "gonna", "wanna",
        "gotta", "kinda", "sorta", "dunno", "yeah", "yep", "nope", "yup", "im", "ive", "id", "ill", "youre", "dont", "cant",
        "wont", "didnt", "doesnt", "isnt", "wasnt", "couldnt", "shouldnt", "wouldnt", "havent", "hasnt", "hadnt", "arent",
        "werent", "thats", "theres", "whats", "lets", "its", "hes", "shes", "theyre", "weve", "theyve", "youve", "ibuprofen",
        "kcal", "cal", "steps", "km", "mi", "ft", "lbs", "degc", "degf", "med", "meds", "biologic", "biologics", "biosimilar",
        "biosimilars", "flareup", "flareups", "infusions", "rheumatology", "physiotherapist", "bloodwork", "labs", "refill",
        "refills", "rx", "otc", "pharm", "dr", "appt", "appts", "followup", "checkup", "telehealth", "ultrasound", "xray",
        "xrays", "wfh", "pcp", "np", "pa", "rn", "md", "ms", "ra", "psa", "sle", "oa", "as", "axspa", "nraxspa", "uveitis",
    ]

    /// A vocabulary of `words` only (no dictionary), for tests.
    init(words: Set<String>, properNouns: Set<String> = []) {
        var table = WordTable(capacity: words.count + Self.builtInCount)
        for word in words { table.insert(word) }
        Self.insertBuiltIn(into: &table)
        self.words = table
        self.properNouns = WordTable(properNouns)
    }

    private init(table: WordTable, properNouns: WordTable) {
        self.words = table
        self.properNouns = properNouns
    }

    /// The words safe without a dictionary: short words, the lists here, the clinical
    /// vocabulary, device words, relations and titles.
    private static var builtIn: [Set<String>] {
        [shortWords, listed, ClinicalVocabulary.words, Scrubber.deviceWords, Scrubber.relations, Scrubber.titles]
    }
    private static var builtInCount: Int { builtIn.reduce(0) { $0 + $1.count } }

    private static func insertBuiltIn(into table: inout WordTable) {
        for words in builtIn { for word in words { table.insert(word) } }
    }

    /// Calls `body` with each non-empty line of `text`, without an array of them.

    /// The vocabulary with the word lists read from `directory` (holding `american-english-large`
    /// and `en_med_glut.dic`) or, when nil, from their Debian package paths.
    public static func load(directory: URL? = nil) throws -> SafeVocabulary {
        try load(directory: directory, bytewise: true)
    }

    /// ``load(directory:)``; `bytewise`: lines of ASCII are folded and inserted as bytes (issue 28:
    /// the lists' 480,000 lines took 0.28 s of CPU through `String`s and scalars in every export),
    /// the others go the way every line went before — which `bytewise: false` keeps for all of
    /// them, so a test can hold the two tables equal on the real lists.
    static func load(directory: URL?, bytewise: Bool) throws -> SafeVocabulary {
        let english = directory.map { $0.appendingPathComponent("american-english-large").path } ?? englishWordListPath
        let medical = directory.map { $0.appendingPathComponent("en_med_glut.dic").path } ?? medicalWordListPath
        let englishBytes = try read(english, package: "wamerican-large")
        let medicalBytes = try read(medical, package: "hunspell-en-med")
        // Keys go straight into the final table (each once), sized from the line counts: no
        // set of them is built, copied or merged first. The transient sets of an earlier version
        // (two copies of 8 MB each) were an export's peak resident memory (heaptrack, issue 28).
        let lines = englishBytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } + medicalBytes.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
        var table = WordTable(capacity: lines + builtInCount, bytes: englishBytes.count + medicalBytes.count)
        var key: [UInt8] = []
        forEachLine(of: englishBytes, bytewise: bytewise) { line in
            switch line {
            case .ascii(let bytes):
                if !(0x41...0x5A).contains(bytes[bytes.startIndex]), foldASCII(bytes, into: &key) >= 3 { table.insert(ascii: key) }
            case .text(let text):
                if let (key, capitalised) = englishKey(text), !capitalised { table.insert(key) }
            }
        }
        forEachLine(of: medicalBytes, bytewise: bytewise) { line in
            switch line {
            case .ascii(let bytes) where bytes[bytes.startIndex] != 0x2F:
                let word = bytes[..<(bytes.firstIndex(of: 0x2F) ?? bytes.endIndex)]
                // Lower-case entries only: the medical list also holds eponyms and brand names (`Paco`).
                guard (0x61...0x7A).contains(word[word.startIndex]), word.allSatisfy({ (0x61...0x7A).contains($0) || $0 == 0x2D || $0 == 0x27 })
                else { return }
                for part in word.split(separator: 0x2D) where foldASCII(part, into: &key) >= 3 { table.insert(ascii: key) }
            case .ascii(let bytes):
                insertMedical(String(decoding: bytes, as: UTF8.self)[...], into: &table)
            case .text(let text):
                insertMedical(text, into: &table)
            }
        }
        // Proper nouns: capitalised entries whose key is also a lower-case dictionary entry
        // (before the built-in words join the table, as the dictionaries alone decide this).
        var properNouns: Set<String> = []
        forEachLine(of: englishBytes, bytewise: bytewise) { line in
            switch line {
            case .ascii(let bytes):
                if (0x41...0x5A).contains(bytes[bytes.startIndex]), foldASCII(bytes, into: &key) >= 3, table.contains(ascii: key) {
                    properNouns.insert(String(decoding: key, as: UTF8.self))
                }
            case .text(let text):
                if let (key, capitalised) = englishKey(text), capitalised, table.contains(key) { properNouns.insert(key) }
            }
        }
        insertBuiltIn(into: &table)
        return SafeVocabulary(table: table, properNouns: WordTable(properNouns))
    }

    /// A word list's line: its bytes when they are all ASCII (and `bytewise`), else its text.
    private enum Line {
        case ascii(ArraySlice<UInt8>)
        case text(Substring)
    }

    /// Each non-empty line of `bytes` (split at LF). A line with a byte past ASCII is decoded on
    /// its own — a newline ends any malformed UTF-8 sequence, so that is the text decoding the
    /// whole list gives for the line.
    private static func forEachLine(of bytes: [UInt8], bytewise: Bool, _ body: (Line) -> Void) {
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0x0A) ?? bytes.count
            if start < end {
                let line = bytes[start..<end]
                if bytewise, line.allSatisfy({ $0 < 0x80 }) { body(.ascii(line)) } else { body(.text(String(decoding: line, as: UTF8.self)[...])) }
            }
            start = end + 1
        }
    }

    /// What ``TextTokenizer/fold(_:)`` makes of ASCII `bytes` (letters lower-cased, digits kept,
    /// the rest dropped), into `key`; the key's length.
    private static func foldASCII(_ bytes: ArraySlice<UInt8>, into key: inout [UInt8]) -> Int {
        key.removeAll(keepingCapacity: true)
        for var byte in bytes {
            if byte >= 0x41 && byte <= 0x5A { byte += 32 }
            if (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) { key.append(byte) }
        }
        return key.count
    }

    /// An English list line's key (3 characters or more) and whether the line is capitalised.
    private static func englishKey(_ line: Substring) -> (key: String, capitalised: Bool)? {
        guard let first = line.unicodeScalars.first else { return nil }
        let key = TextTokenizer.fold(Array(line.unicodeScalars)[...]).0
        return key.count >= 3 ? (key, first.properties.isUppercase) : nil
    }

    /// A medical list line's lower-case entry (before `/`), each `-` part of 3 characters or more.
    private static func insertMedical(_ line: Substring, into table: inout WordTable) {
        let word = line.split(separator: "/", maxSplits: 1).first ?? line
        // Lower-case entries only: the medical list also holds eponyms and brand names (`Paco`).
        guard let first = word.unicodeScalars.first, first.properties.isLowercase,
            word.unicodeScalars.allSatisfy({ $0.properties.isLowercase || $0 == "-" || $0 == "'" })
        else { return }
        for part in word.split(separator: "-") {
            let key = TextTokenizer.fold(Array(part.unicodeScalars)[...]).0
            if key.count >= 3 { table.insert(key) }
        }
    }

    private static let systemResult: Result<SafeVocabulary, any Error> = Result {
        let directory = ProcessInfo.processInfo.environment["COHORT_DICTIONARY_DIR"].map { URL(fileURLWithPath: $0) }
        return try load(directory: directory)
    }

    /// The vocabulary from the Debian package paths (or `COHORT_DICTIONARY_DIR`), read once per
    /// process.
    public static func system() throws -> SafeVocabulary {
        try systemResult.get()
    }

    /// Whether the system vocabulary (``system()``) holds the folded `key`; false when the word
    /// lists are not installed.
    static func systemContains(_ key: String) -> Bool {
        guard case .success(let vocabulary) = systemResult else { return false }
        return vocabulary.contains(key)
    }

    private static func read(_ path: String, package: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CohortError(
                .notFound, "the word list the free-text scrubber keeps words by is missing", at: .init(file: path),
                hint: "install the Debian package \(package) (apt-get install \(package)), or set COHORT_DICTIONARY_DIR")
        }
        // The English list is UTF-8; a stray Latin-1 byte must not lose the whole list (lines
        // past ASCII are decoded, repairing, one by one).
        return [UInt8](data)
    }

    /// This vocabulary with `words` (protocol kinds, units, medication names…) also safe; each
    /// is split into words as the tokenizer splits text.
    package func adding(_ words: some Sequence<String>) -> SafeVocabulary {
        var copy = self
        for word in words {
            for key in TextTokenizer.keys(word) where key.contains(where: \.isLetter) { copy.extra.insert(key) }
        }
        return copy
    }

    /// Whether the folded `key` is safe.
    func contains(_ key: String) -> Bool {
        words.contains(key) || extra.contains(key)
    }

    /// Whether the ASCII key of a packed token (hash and bytes) is safe.
    @inline(__always)
    func contains(hash: UInt64, bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if words.contains(hash: hash, bytes: bytes) { return true }
        return !extra.isEmpty && extra.contains(String(decoding: bytes, as: UTF8.self))
    }

    /// Whether the folded ASCII `key`, whose tokenizer hash is `hash`, is safe: one probe, no
    /// allocation.
    @inline(__always)
    func contains(hash: UInt64, key: String) -> Bool {
        if words.contains(hash: hash, key: key) { return true }
        return !extra.isEmpty && extra.contains(key)
    }

    /// Whether the folded `key` is a safe word the dictionary also lists capitalised.
    func isProperNoun(_ key: String) -> Bool { properNouns.contains(key) }
}

/// A set of ASCII word keys probed by ``TextTokenizer/hashKeyPadded(_:_:)`` and one byte
/// comparison: no string is made to look a word up.
///
/// Compact, since the word lists hold about 260,000 keys held by every export process: per key a
/// 32-bit tag (the hash's upper half: the slot comes from its lower bits, so keys in one probe
/// chain still differ in their tags), a 32-bit start and an 8-bit length into one byte array, and
/// two 32-bit slots (at most half used) — about 17 bytes plus the key's, where a 64-bit hash and
/// 32-bit length took 29 (issue 28, eighth round: 1.8 MB less at every size). ASCII keys longer
/// than 255 bytes, like keys that are not ASCII, are kept as strings in `others`.
struct WordTable: Sendable {
    private var slots: [Int32]
    private var tags: [UInt32] = []
    private var starts: [Int32] = []
    private var lengths: [UInt8] = []
    private var bytes: [UInt8] = []
    /// Keys that are not ASCII after folding, or longer than ``longestInline`` bytes.
    private var others: Set<String> = []
    private var mask: Int

    /// The longest key kept in the byte array.
    static let longestInline = Int(UInt8.max)

    init(_ keys: Set<String>) {
        self.init(capacity: keys.count)
        for key in keys { insert(key) }
    }

    /// An empty table sized for about `capacity` distinct keys of about `bytes` bytes in all
    /// (it grows past them; room reserved and not used is never touched).
    init(capacity: Int, bytes byteCount: Int = 0) {
        // At most half the slots used once `capacity` keys are in: no rehashing on the way.
        var slotCount = 64
        while slotCount < capacity * 2 { slotCount *= 2 }
        mask = slotCount - 1
        slots = [Int32](repeating: -1, count: slotCount)
        tags.reserveCapacity(capacity)
        starts.reserveCapacity(capacity)
        lengths.reserveCapacity(capacity)
        bytes.reserveCapacity(byteCount)
    }

    @inline(__always)
    private static func tag(_ hash: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: hash >> 32) }

    /// Adds `key` unless it is in the table already.
    mutating func insert(_ key: String) {
        let utf8 = Array(key.utf8)
        guard utf8.allSatisfy({ $0 < 0x80 }), utf8.count <= Self.longestInline else {
            others.insert(key)
            return
        }
        insert(ascii: utf8)
    }

    /// Adds the ASCII key `utf8` unless it is in the table already.
    mutating func insert(ascii utf8: [UInt8]) {
        guard utf8.count <= Self.longestInline else {
            others.insert(String(decoding: utf8, as: UTF8.self))
            return
        }
        let hash = TextTokenizer.hash(asciiKey: utf8)
        if utf8.withUnsafeBufferPointer({ contains(hash: hash, bytes: $0) }) { return }
        if (tags.count + 1) * 2 > slots.count { grow() }
        var slot = Int(truncatingIfNeeded: hash) & mask
        while slots[slot] >= 0 { slot = (slot + 1) & mask }
        slots[slot] = Int32(tags.count)
        tags.append(Self.tag(hash))
        starts.append(Int32(bytes.count))
        lengths.append(UInt8(utf8.count))
        bytes += utf8
    }

    /// Distinct keys in the table.
    var count: Int { tags.count + others.count }

    /// Twice the slots (at most half of them used), every key placed again by its hash (made
    /// again from its bytes: only the tag is kept).
    private mutating func grow() {
        mask = slots.count * 2 - 1
        slots = [Int32](repeating: -1, count: slots.count * 2)
        for entry in tags.indices {
            let start = Int(starts[entry])
            let hash = TextTokenizer.hash(asciiKey: Array(bytes[start..<(start + Int(lengths[entry]))]))
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(entry)
        }
    }

    /// Whether the ASCII `key` with tokenizer hash `hash` is in the table (compared byte by byte).
    @inline(__always)
    func contains(hash: UInt64, key: String) -> Bool {
        let count = key.utf8.count
        guard count <= Self.longestInline else { return others.contains(key) }
        let tag = Self.tag(hash)
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = Int(slots[slot])
            if entry < 0 { return false }
            if tags[entry] == tag, Int(lengths[entry]) == count {
                let start = Int(starts[entry])
                if key.utf8.elementsEqual(bytes[start..<(start + count)]) { return true }
            }
            slot = (slot + 1) & mask
        }
    }

    func contains(_ key: String) -> Bool {
        let utf8 = Array(key.utf8)
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return others.contains(key) }
        return contains(ascii: utf8)
    }

    /// Whether the ASCII key `utf8` is in the table.
    func contains(ascii utf8: [UInt8]) -> Bool {
        utf8.withUnsafeBufferPointer { contains(hash: TextTokenizer.hash(asciiKey: utf8), bytes: $0) }
    }

    /// Every key, in the order they came in (for tests that hold two tables equal).
    var keys: [String] {
        tags.indices.map { String(decoding: bytes[Int(starts[$0])..<(Int(starts[$0]) + Int(lengths[$0]))], as: UTF8.self) } + others.sorted()
    }

    @inline(__always)
    func contains(hash: UInt64, bytes key: UnsafeBufferPointer<UInt8>) -> Bool {
        guard key.count <= Self.longestInline else { return others.contains(String(decoding: key, as: UTF8.self)) }
        let tag = Self.tag(hash)
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = Int(slots[slot])
            if entry < 0 { return false }
            if tags[entry] == tag, Int(lengths[entry]) == key.count {
                let start = Int(starts[entry])
                var equal = true
                for k in 0..<key.count where bytes[start + k] != key[k] {
                    equal = false
                    break
                }
                if equal { return true }
            }
            slot = (slot + 1) & mask
        }
    }
}
