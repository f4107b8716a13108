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
        let all = words.union(Self.shortWords).union(Self.listed).union(ClinicalVocabulary.words)
            .union(Scrubber.deviceWords).union(Scrubber.relations).union(Scrubber.titles)
        self.words = WordTable(all)
        self.properNouns = WordTable(properNouns)
    }

    /// The vocabulary with the word lists read from `directory` (holding `american-english-large`
    /// and `en_med_glut.dic`) or, when nil, from their Debian package paths.
    public static func load(directory: URL? = nil) throws -> SafeVocabulary {
        let english = directory.map { $0.appendingPathComponent("american-english-large").path } ?? englishWordListPath
        let medical = directory.map { $0.appendingPathComponent("en_med_glut.dic").path } ?? medicalWordListPath
        let englishText = try read(english, package: "wamerican-large")
        let medicalText = try read(medical, package: "hunspell-en-med")
        var lower: Set<String> = []
        var capitalised: Set<String> = []
        lower.reserveCapacity(200_000)
        for line in englishText.split(separator: "\n", omittingEmptySubsequences: true) {
            guard let first = line.unicodeScalars.first else { continue }
            let key = TextTokenizer.fold(Array(line.unicodeScalars)[...]).0
            guard key.count >= 3 else { continue }
            if first.properties.isUppercase { capitalised.insert(key) } else { lower.insert(key) }
        }
        for line in medicalText.split(separator: "\n", omittingEmptySubsequences: true) {
            let word = line.split(separator: "/", maxSplits: 1).first ?? line
            // Lower-case entries only: the medical list also holds eponyms and brand names (`Paco`).
            guard let first = word.unicodeScalars.first, first.properties.isLowercase,
                word.unicodeScalars.allSatisfy({ $0.properties.isLowercase || $0 == "-" || $0 == "'" })
            else { continue }
            for part in word.split(separator: "-") {
                let key = TextTokenizer.fold(Array(part.unicodeScalars)[...]).0
                if key.count >= 3 { lower.insert(key) }
            }
        }
        var vocabulary = SafeVocabulary(words: lower, properNouns: capitalised.intersection(lower))
        vocabulary.extra = []
        return vocabulary
    }

    /// Read on first use (a `static let` is initialised once, thread-safely).
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

    private static func read(_ path: String, package: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CohortError(
                .notFound, "the word list the free-text scrubber keeps words by is missing", at: .init(file: path),
                hint: "install the Debian package \(package) (apt-get install \(package)), or set COHORT_DICTIONARY_DIR")
        }
        // The English list is UTF-8; a stray Latin-1 byte must not lose the whole list.
        return String(decoding: data, as: UTF8.self)
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
struct WordTable: Sendable {
    private var slots: [Int32]
    private var hashes: [UInt64] = []
    private var starts: [Int32] = []
    private var lengths: [Int32] = []
    private var bytes: [UInt8] = []
    /// Keys that are not ASCII after folding.
    private var others: Set<String> = []
    private let mask: Int

    init(_ keys: Set<String>) {
        var capacity = 64
        while capacity < keys.count * 2 { capacity <<= 1 }
        mask = capacity - 1
        slots = [Int32](repeating: -1, count: capacity)
        for key in keys {
            let utf8 = Array(key.utf8)
            guard utf8.allSatisfy({ $0 < 0x80 }) else {
                others.insert(key)
                continue
            }
            let hash = TextTokenizer.hash(asciiKey: utf8)
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] >= 0 { slot = (slot + 1) & mask }
            slots[slot] = Int32(hashes.count)
            hashes.append(hash)
            starts.append(Int32(bytes.count))
            lengths.append(Int32(utf8.count))
            bytes += utf8
        }
    }

    /// Whether the ASCII `key` with tokenizer hash `hash` is in the table (compared byte by byte).
    @inline(__always)
    func contains(hash: UInt64, key: String) -> Bool {
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = Int(slots[slot])
            if entry < 0 { return false }
            if hashes[entry] == hash, Int(lengths[entry]) == key.utf8.count {
                let start = Int(starts[entry])
                if key.utf8.elementsEqual(bytes[start..<(start + Int(lengths[entry]))]) { return true }
            }
            slot = (slot + 1) & mask
        }
    }

    func contains(_ key: String) -> Bool {
        let utf8 = Array(key.utf8)
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return others.contains(key) }
        return utf8.withUnsafeBufferPointer { contains(hash: TextTokenizer.hash(asciiKey: utf8), bytes: $0) }
    }

    @inline(__always)
    func contains(hash: UInt64, bytes key: UnsafeBufferPointer<UInt8>) -> Bool {
        var slot = Int(truncatingIfNeeded: hash) & mask
        while true {
            let entry = Int(slots[slot])
            if entry < 0 { return false }
            if hashes[entry] == hash, Int(lengths[entry]) == key.count {
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
