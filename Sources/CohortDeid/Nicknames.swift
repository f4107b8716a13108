/// Common English diminutives, so "Katherine 'Kate' O'Brien" loses the nickname too. Nicknames
/// are matched only when capitalized in the text, because many are ordinary words.
enum Nicknames {
    static let table: [String: [String]] = [
        "alexander": ["alex", "xander"], "alexandra": ["alex", "sasha", "lexi"], "andrew": ["andy", "drew"],
        "anthony": ["tony"], "benjamin": ["ben", "benny"], "catherine": ["cathy", "kate", "katie"],
        "charles": ["charlie", "chuck"], "christopher": ["chris", "topher"], "christine": ["chris", "tina"],
        "daniel": ["dan", "danny"], "david": ["dave", "davy"], "deborah": ["debbie", "deb"], "edward": ["eddie", "ted", "ned"],
        "elizabeth": ["liz", "beth", "betsy", "lizzie", "eliza", "betty"], "emily": ["emmy", "em"], "francis": ["frank"],
        "gregory": ["greg"], "james": ["jim", "jimmy", "jamie"], "jennifer": ["jen", "jenny"], "jessica": ["jess", "jessie"],
        "john": ["jack", "johnny"], "jonathan": ["jon", "jonny"], "joseph": ["joe", "joey"], "jose": ["pepe"],
        "katherine": ["kate", "katie", "kathy", "kat"], "kathryn": ["kate", "katie", "kathy"], "margaret": ["maggie", "meg", "peggy"],
        "matthew": ["matt"], "michael": ["mike", "mikey"], "nicholas": ["nick", "nicky"], "patricia": ["pat", "patty", "trish"],
        "patrick": ["pat", "paddy"], "rebecca": ["becky", "becca"], "richard": ["rick", "rich", "dick"],
        "robert": ["bob", "bobby", "rob", "robbie"], "samantha": ["sam", "sammy"], "samuel": ["sam", "sammy"],
        "stephen": ["steve"], "steven": ["steve"], "susan": ["sue", "susie"], "thomas": ["tom", "tommy"],
        "victoria": ["vicky", "tori"], "william": ["will", "bill", "billy", "liam"], "zoe": ["zo"],
    ]

    /// Diminutives of the first name whose key is `first` (3 letters or more).
    static func diminutives(of first: String) -> [String] {
        (table[first] ?? []).filter { $0.count >= 3 }
    }
}
