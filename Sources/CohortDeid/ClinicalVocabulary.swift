/// Words that are ordinary or clinical vocabulary although some people carry them as names:
/// eponyms of diseases and signs, anatomy, drug names, months and weekdays, and common English
/// words that are also first names or surnames.
///
/// The scrubber uses the list so clean notes stay readable: a word on it is replaced only where
/// the text says "person" (it is part of a roster full name, a possessive before a device, a
/// capitalized name next to another name part…); a roster full name always wins. The residual
/// scanner uses it to decide which roster name parts are searched for *alone*: a surname such as
/// `Field` or `Long` is looked for only inside the participant's full name, not as a bare word.
///
/// Keys are the tokenizer's: lower-case, accents folded, apostrophes removed (see
/// ``TextTokenizer``).
enum ClinicalVocabulary {
    /// Whether `key` (a folded word) is ordinary or clinical vocabulary.
    static func contains(_ key: String) -> Bool { words.contains(key) }

    /// Eponymous diseases, signs, tests and instruments that appear in clinical notes.
    static let eponyms: Set<String> = [
        "achilles", "addison", "alzheimer", "apgar", "asperger", "babinski", "baker", "barrett", "basdai", "basfi", "bechterew",
        "behcet", "bell", "bowen", "braxton", "broca", "brugada", "buerger", "burkitt", "chagas", "charcot", "cheyne", "colles",
        "conn", "cooley", "creutzfeldt", "crohn", "cushing", "dandy", "de quervain", "down", "dupuytren", "ehlers", "epstein",
        "fallot", "fanconi", "gaucher", "gilbert", "glasgow", "graves", "guillain", "hashimoto", "heberden", "hodgkin",
        "horner", "huntington", "kaposi", "kawasaki", "korsakoff", "lyme", "marfan", "meniere", "munchausen", "murphy",
        "osgood", "paget", "parkinson", "parkinsons", "pott", "raynaud", "reiter", "romberg", "schober", "sjogren", "still",
        "tourette", "turner", "tinel", "valsalva", "wernicke", "whipple", "wilson", "wilms", "holter", "doppler", "foley",
        "mantoux", "snellen", "bristol", "berg", "likert", "borg",
    ]

    /// Anatomy and clinical words that are also names.
    static let clinical: Set<String> = [
        "back", "hip", "hips", "knee", "heel", "neck", "chest", "hand", "hands", "arm", "leg", "foot", "feet", "head", "eye",
        "eyes", "joint", "joints", "spine", "rib", "ribs", "jaw", "skin", "heart", "lung", "lungs", "liver", "kidney", "bone",
        "pain", "ache", "fever", "rash", "flare", "fatigue", "stiffness", "stiff", "sore", "swelling", "nausea", "dizzy",
        "sleep", "rest", "walk", "run", "swim", "bath", "bed", "nurse", "doctor", "clinic", "ward", "dose", "pill", "pills",
        "tablet", "injection", "shot", "scan", "test", "sample", "field", "blood", "pressure", "rate", "range", "level",
    ]

    /// Drug and product names that collide with names or words.
    static let drugs: Set<String> = [
        "advil", "aleve", "tylenol", "humira", "enbrel", "cosentyx", "taltz", "remicade", "simponi", "cimzia", "xeljanz",
        "rinvoq", "otezla", "celebrex", "naproxen", "ibuprofen", "paracetamol", "acetaminophen", "methotrexate",
        "sulfasalazine", "prednisone", "prednisolone", "adalimumab", "etanercept", "infliximab", "secukinumab",
        "ixekizumab", "golimumab", "certolizumab", "tofacitinib", "upadacitinib", "sumatriptan", "rizatriptan", "aimovig",
        "ajovy", "emgality", "nurtec", "ubrelvy", "topiramate", "propranolol", "amitriptyline", "botox", "aspirin",
        "diclofenac", "etoricoxib", "meloxicam", "tramadol", "codeine", "morphine", "melatonin", "magnesium", "riboflavin",
    ]

    /// Month and weekday names (several are first names: April, May, June, August).
    static let calendar: Set<String> = [
        "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
        "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "jan", "feb", "mar", "apr",
        "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mon", "tue", "wed", "thu", "fri", "sat", "sun",
    ]

    /// Common English words that are also first names or surnames.
    static let common: Set<String> = [
        "hope", "will", "may", "mark", "bill", "grace", "joy", "faith", "rose", "lily", "iris", "daisy", "holly", "ivy",
        "dawn", "summer", "autumn", "winter", "spring", "sky", "rain", "storm", "river", "brook", "hunter", "forest", "glen",
        "dale", "hill", "wood", "woods", "stone", "rock", "lake", "marsh", "moor", "bush", "moss", "reed", "heath", "field",
        "fields", "long", "little", "short", "small", "young", "old", "new", "good", "best", "well", "strong", "hardy",
        "brown", "black", "white", "green", "gray", "grey", "gold", "silver", "love", "rich", "frank", "earnest", "noble",
        "king", "prince", "duke", "bishop", "pope", "knight", "page", "cook", "baker", "miller", "smith", "mason", "taylor",
        "carter", "porter", "hunt", "fisher", "shepherd", "walker", "turner", "weaver", "sample", "bath", "hand", "bell",
        "case", "chance", "cash", "price", "sharp", "swift", "fox", "wolf", "bird", "crow", "hawk", "lamb", "bear", "drew",
        "nick", "pat", "sue", "sunny", "ray", "rob", "jack", "bob", "tom", "van", "art", "gene", "guy", "major", "miles",
        "mercy", "patience", "prudence", "constance", "trust", "honor", "sterling", "chase", "wade", "lane", "street",
        "house", "hall", "church", "bridge", "ford", "gates", "banks", "park", "parks", "west", "east", "north", "south",
        "early", "late", "day", "night", "week", "morning", "evening", "noon", "today", "said", "felt", "went", "got",
        "still", "just", "even", "much", "more", "less", "better", "worse", "ok", "okay", "fine", "all",
    ]

    /// Every word above.
    static let words: Set<String> = eponyms.union(clinical).union(drugs).union(calendar).union(common)
}
