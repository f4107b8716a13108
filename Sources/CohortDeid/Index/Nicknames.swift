/// English given names and their usual diminutives (Robert → Bob, Bobby, Rob, Robbie, Bert…),
/// so a note that calls a participant by a nickname loses it too. The table works both ways:
/// a participant enrolled as "Bob" also matches "Robert" and the other diminutives of Robert.
///
/// Nicknames that are ordinary words (Will, Bill, Pat, Sue, Rob…) are on
/// ``ClinicalVocabulary`` and are replaced only with evidence of a person (see ``Scrubber``).
enum Nicknames {
    /// One line per formal name: the formal name, then its diminutives.
    private static let lines = """
        abigail abby abbie gail
        abraham abe bram
        adam ad
        adelaide addie adele heidi
        adrian ade
        agnes aggie nessa
        albert al bert bertie
        alexander alex alec xander sandy lex
        alexandra alex sasha lexi sandra sandy alexa
        alexis lexi lexie
        alfred alf alfie fred freddie
        alice allie ally
        alicia ali allie lisa
        allison ali allie
        amanda mandy manda amy
        amelia millie amy mia
        andrea andie andi
        andrew andy drew
        angela angie
        anita nita
        ann annie nan nancy
        anna annie
        anne annie nan
        anthony tony ant
        antonio tony toni
        archibald archie
        arnold arnie
        arthur art artie
        augustus gus augie
        barbara barb barbie babs
        bartholomew bart
        beatrice bea trixie
        benedict ben benny
        benjamin ben benny benji
        bernadette bernie detta
        bernard bernie barney
        beverly bev
        bradley brad
        brenda bren
        bridget biddy bridie
        calvin cal
        cameron cam
        caroline carrie carol caz
        carolyn carrie lyn
        catherine cathy kate katie cat kitty
        cecilia cece cissy celia
        charles charlie chuck chas chaz
        charlotte charlie lottie lotte
        christina chris tina chrissy
        christine chris tina chrissy
        christopher chris topher kit
        clarence clare
        clifford cliff
        constance connie
        cornelius neil corny
        cynthia cindy
        daniel dan danny
        danielle dani
        david dave davy davie
        deborah debbie deb debs
        dennis denny
        dominic dom nic
        donald don donnie
        dorothy dot dottie dolly
        douglas doug
        edith edie
        edmund ed eddie ned
        edward ed eddie ted teddy ned
        eleanor ellie nora nell
        elijah eli
        elizabeth liz beth betsy lizzie eliza betty libby bess bessie elsie lisa
        ellen ellie nell
        emily emmy em millie
        emma em emmy
        eric rick ricky
        ernest ernie
        eugene gene
        evelyn eve evie
        ezekiel zeke
        florence flo florrie
        frances fran frankie fanny
        francis frank frankie
        frederick fred freddie fritz
        gabriel gabe
        gabrielle gabby gabi
        geoffrey geoff
        george georgie
        georgina georgie gina
        gerald gerry jerry
        geraldine gerry
        gertrude gertie trudy
        gilbert gil bert
        gregory greg
        gwendolyn gwen wendy
        harold harry hal
        harriet hattie
        helen nell nellie lena
        henry harry hank hal
        herbert herb bert
        howard howie
        hubert bert hugh
        ignatius iggy
        isaac ike
        isabella bella izzy isa
        isabel bella izzy
        jacob jake jay
        jacqueline jackie jacky
        james jim jimmy jamie jem
        jane janie jenny
        janet jan
        jason jay
        jeffrey jeff
        jennifer jen jenny jenna
        jeremy jerry jez
        jessica jess jessie
        joanna jo jojo
        joanne jo
        john jack johnny jon
        jonathan jon jonny nathan
        joseph joe joey jo
        josephine jo josie
        joshua josh
        judith judy jude
        julia jules julie
        julian jules
        katherine kate katie kathy kat kit kitty
        kathleen kathy kate
        kathryn kate katie kathy
        kenneth ken kenny
        kimberly kim
        lawrence larry laurie
        leonard leo len lenny
        leonora leo nora
        lillian lily lil
        louis lou
        louisa lou lulu
        louise lou lulu
        lucille lucy
        lucinda lucy cindy
        madeline maddie maddy
        margaret maggie meg peggy madge marge greta daisy
        marjorie marge margie
        martha marty mattie
        martin marty
        mary molly polly mae mamie
        matilda tilly mattie
        matthew matt matty
        maximilian max
        maxwell max
        melissa mel missy
        michael mike mikey mick mickey
        michelle shelly
        miranda randy mira
        mitchell mitch
        montgomery monty
        nathaniel nate nat
        nathan nate
        nicholas nick nicky nico
        nicole nikki nicky
        oliver ollie
        olivia liv livvy
        pamela pam
        patricia pat patty trish tricia
        patrick pat paddy rick
        penelope penny
        peter pete
        philip phil pip
        phillip phil
        priscilla cilla
        rachel rae
        raymond ray
        rebecca becky becca
        reginald reggie reg
        richard rick rich dick ricky richie
        robert bob bobby rob robbie bert
        roberta bobbie robbie
        rodney rod
        ronald ron ronnie
        rosalind roz
        rosemary rosie
        russell russ
        samantha sam sammy
        samuel sam sammy
        sarah sally sadie
        sebastian seb bash
        sidney sid
        sophia sophie
        stanley stan
        stephanie steph stevie
        stephen steve stevie
        steven steve stevie
        susan sue susie suzy
        suzanne sue suzy
        sylvester sly
        terence terry
        teresa terri tess tessa
        theodore ted teddy theo
        thomas tom tommy
        timothy tim timmy
        tobias toby
        valerie val
        vanessa nessa
        veronica ronnie nicky
        victor vic
        victoria vicky tori vic
        vincent vince vinny
        virginia ginny ginger
        walter walt wally
        wilfred wilf fred
        wilhelmina mina billie
        william will bill billy liam willy
        winifred winnie
        zachary zach zack
        zoe zo
        jose pepe pepito
        francisco paco pancho
        guadalupe lupe
        ignacio nacho
        manuel manolo manny
        dolores lola
        alejandro alex alejo
        giuseppe beppe peppe
        giovanni gianni
        johannes hans jan
        katharina kati kathi
        aleksandr sasha shura
        siobhan shiv
        """

    /// Lower-case formal name → diminutives, and diminutive → the formal names it shortens.
    static let table: [String: [String]] = {
        var result: [String: [String]] = [:]
        for line in lines.split(separator: "\n") {
            let words = line.split(separator: " ").map(String.init)
            guard let formal = words.first, words.count > 1 else { continue }
            result[formal, default: []] += words.dropFirst()
        }
        return result
    }()

    static let formalNames: [String: [String]] = {
        var result: [String: [String]] = [:]
        for (formal, nicknames) in table {
            for nickname in nicknames { result[nickname, default: []].append(formal) }
        }
        return result.mapValues { $0.sorted() }
    }()

    /// Other names the person whose first name key is `first` may be called: its diminutives,
    /// or — when `first` is itself a diminutive — the formal names and their other diminutives.
    static func diminutives(of first: String) -> [String] {
        var result = table[first] ?? []
        for formal in formalNames[first] ?? [] {
            result.append(formal)
            result += table[formal] ?? []
        }
        var seen: Set<String> = [first]
        return result.filter { $0.count >= 2 && seen.insert($0).inserted }
    }

    /// How many formal names the table holds.
    static var count: Int { table.count }
}
