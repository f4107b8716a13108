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
        "mantoux", "snellen", "bristol", "berg", "likert", "borg", "hoffmann", "lhermitte", "phalen", "finkelstein",
        "lachman", "mcmurray", "trendelenburg", "faber", "gaenslen", "yergason", "spurling", "kernig",
        "brudzinski", "homan", "homans", "lasegue", "adson", "apley", "neer", "bouchard", "osler",
        "janeway", "virchow", "kussmaul", "chvostek", "trousseau", "grey", "murphys", "mcburney", "rovsing",
        "epley", "dix", "hallpike", "ménière", "meniere", "sjögren", "takayasu", "wegener", "kawasaki",
        "reye", "tietze", "scheuermann", "perthes", "legg", "calve", "quervain", "colles", "smith",
        "monteggia", "galeazzi", "boutonniere", "mallet", "hamman", "hashimotos", "graves",
        "crohns", "addisons", "cushings", "alzheimers", "huntingtons", "raynauds", "sjogrens", "behcets", "stills", "bells",
    ]

    /// Anatomy and clinical words that are also names.
    static let clinical: Set<String> = [
        "back", "hip", "hips", "knee", "heel", "neck", "chest", "hand", "hands", "arm", "leg", "foot", "feet", "head", "eye",
        "eyes", "joint", "joints", "spine", "rib", "ribs", "jaw", "skin", "heart", "lung", "lungs", "liver", "kidney", "bone",
        "pain", "ache", "fever", "rash", "flare", "fatigue", "stiffness", "stiff", "sore", "swelling", "nausea", "dizzy",
        "sleep", "rest", "walk", "run", "swim", "bath", "bed", "nurse", "doctor", "clinic", "ward", "dose", "pill", "pills",
        "tablet", "injection", "shot", "scan", "test", "sample", "field", "blood", "pressure", "rate", "range", "level",
        "tendon", "muscle", "wrist", "elbow", "shoulder", "ankle", "toe", "toes", "finger", "fingers", "thumb", "stomach",
        "gut", "bowel", "belly", "throat", "ear", "ears", "nose", "mouth", "tooth", "teeth", "brain", "nerve", "vein", "hamstring",
        "disease", "syndrome", "sign", "signs", "reflex", "palsy", "phenomenon", "maneuver", "manoeuvre", "fracture", "node",
        "nodes", "ulcer", "cyst", "test", "scale", "score", "index", "law", "triad", "lymphoma", "sarcoma", "tumor", "tumour",
        "cramp", "cramps", "spasm", "migraine", "headache", "aura", "flu", "cold", "cough", "sneeze", "itch", "burn", "bruise",
        "limp", "gait", "balance", "posture", "stretch", "stretches", "exercise", "physio", "therapy", "yoga", "pilates",
        "gym", "bike", "cycle", "jog", "hike", "ice", "heat", "pack", "brace", "splint", "cane", "crutch", "crutches",
    ]

    /// Drug and product names that collide with names or words.
    static let drugs: Set<String> = [
        "advil", "aleve", "tylenol", "humira", "enbrel", "cosentyx", "taltz", "remicade", "simponi", "cimzia", "xeljanz",
        "rinvoq", "otezla", "celebrex", "naproxen", "ibuprofen", "paracetamol", "acetaminophen", "methotrexate",
        "sulfasalazine", "prednisone", "prednisolone", "adalimumab", "etanercept", "infliximab", "secukinumab",
        "ixekizumab", "golimumab", "certolizumab", "tofacitinib", "upadacitinib", "sumatriptan", "rizatriptan", "aimovig",
        "ajovy", "emgality", "nurtec", "ubrelvy", "topiramate", "propranolol", "amitriptyline", "botox", "aspirin",
        "diclofenac", "etoricoxib", "meloxicam", "tramadol", "codeine", "morphine", "melatonin", "magnesium", "riboflavin",
        "ginger", "olive", "basil", "sage", "pepper", "honey", "candy", "cherry", "rosemary", "chamomile", "tea", "coffee",
        "iron", "zinc", "vitamin", "folic", "omega", "gabapentin", "pregabalin", "lyrica", "duloxetine", "cymbalta",
        "sertraline", "zoloft", "fluoxetine", "prozac", "omeprazole", "lansoprazole", "metformin", "insulin", "warfarin",
        "apixaban", "eliquis", "xarelto", "atorvastatin", "lipitor", "lisinopril", "amlodipine", "levothyroxine", "synthroid",
        "hydroxychloroquine", "plaquenil", "leflunomide", "azathioprine", "mesalamine", "budesonide", "colchicine",
        "allopurinol", "excedrin", "motrin", "naprosyn", "voltaren", "zomig", "maxalt", "imitrex", "relpax", "cafergot",
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
        "april", "june", "august", "dean", "jay", "kit", "max", "don", "ed", "al", "penny", "sandy", "carol", "chuck",
        "dick", "hank", "rod", "lance", "eve", "clay", "rusty", "amber", "ruby", "pearl", "crystal", "misty", "sandy",
        "sunny", "rocky", "buck", "cliff", "glen", "heath", "barry", "gay", "gale", "wren", "robin", "jade", "olive", "ginger",
        "dot", "dolly", "patty", "lou", "bert", "ted", "teddy", "nat", "bill", "billy", "mick", "tim", "liv", "joe", "ben",
        "sam", "dan", "jim", "jo", "em", "bo", "tony", "ron", "vic", "val", "cal", "gus", "mo", "flo", "bea", "tess",
        "hope", "faith", "charity", "harmony", "destiny", "trinity", "journey", "star", "angel", "sage", "blue", "cole",
        "may", "bath", "hand", "sample", "long", "little", "mark", "field", "marks", "hands", "samples", "rice", "nash",
        "beach", "shore", "bay", "cove", "vale", "dell", "grove", "orchard", "meadow", "meadows", "bloom", "blossom", "petal",
        "steel", "iron", "tin", "copper", "brass", "wells", "well", "spring", "springs", "pond", "pool", "poole", "waters",
        "rivers", "lakes", "hills", "woods", "stones", "rocks", "cross", "crosse", "cox", "hart", "heart", "lord", "earl",
        "baron", "child", "man", "mann", "friend", "friends", "love", "loving", "sweet", "fair", "gentle", "bright", "moody",
        "bliss", "merry", "happy", "glad", "golden", "bone", "flesh", "blood", "foot", "legg", "arms", "head", "body",
        "christmas", "easter", "winters", "summers", "snow", "frost", "hale", "wise", "good", "goode", "best", "rich",
        "rose", "lily", "iris", "daisy", "violet", "heather", "jasmine", "poppy", "willow", "hazel", "holly", "ivy", "fern",
        "sky", "skye", "dawn", "eve", "noel", "nelly", "brook", "brooks", "storm", "stormy", "rain", "raine", "rainy",
        "bob", "bobby", "rob", "robbie", "will", "willy", "pat", "sue", "ray", "art", "gene", "guy", "drew", "nick", "jack",
        "tom", "frank", "grace", "joy", "miles", "major", "mercy", "patience", "prudence", "constance", "trust", "chase",
        "wade", "lane", "hunter", "summer", "autumn", "winter", "forest", "river", "dale", "hill", "wood", "stone", "rock",
        "lake", "marsh", "bush", "moss", "reed", "king", "prince", "duke", "page", "cook", "baker", "miller", "mason",
        "taylor", "carter", "porter", "hunt", "fisher", "walker", "turner", "price", "sharp", "swift", "fox", "wolf",
        "bird", "crow", "hawk", "lamb", "bear", "short", "small", "young", "brown", "black", "white", "green", "gray",
    ]

    /// Every word above.
    static let words: Set<String> = eponyms.union(clinical).union(drugs).union(calendar).union(common)
}
