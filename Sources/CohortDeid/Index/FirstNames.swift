/// Common given names (US, UK, European, Hispanic, South Asian, East Asian and African ones among
/// them), for names of people who are not on the roster: a relative ("my daughter Emma"), a
/// friend, a carer. The scrubber replaces a capitalized word on this list unless it is ordinary
/// or clinical vocabulary (``ClinicalVocabulary``): "Emma" goes, "Grace" or "May" go only after
/// a relation word or a title. Keys are folded like ``TextTokenizer`` keys.
enum FirstNames {
    private static let text = """
        aaliyah aaron abdul abigail adam adele adrian ahmed aidan aisha alan albert alberto alejandro alex alexander
        alexandra alfie alice alicia alina alison amanda amber amelia amir amy ana andre andrea andreas andrew angela
        angelo anita anja ann anna anne annette anthony antoine antonio anya archie arjun arthur ashley astrid aurelie
        ava barbara beatriz becky ben benjamin bernard beth bethany betty beverly bianca brandon brenda brian bridget
        brittany bruce bruno caleb camila carl carla carlos carmen carol caroline carolyn casey catherine cecilia chantal
        charles charlie charlotte chen chloe chris christian christina christine christopher claire clara claudia colin
        connor craig cristina cynthia dagmar daisuke dalia damian daniel daniela danielle darius darren david deborah
        deepa denise dennis derek diana diane diego dieter dimitri dominic donald donna doris dorothy dylan edith eduardo
        edward eileen elena eli elias elif elijah elise elizabeth ella ellen ellie emily emma enrique eric erica erik
        ernesto esther ethan eugene eva evelyn fabian fatima felix fernando fiona florian frances francesca francisco
        franz freya gabriel gabriela gareth gary gemma george georgia gerald gerhard gianluca gina giovanni giulia
        gloria gordon greg gregory gustavo hamza hannah hans harold harper harriet harry heather heidi helen helena
        henrik henry hiroshi howard hugo ian ibrahim ines ingrid irene isaac isabel isabella isla ivan jack jacob
        jacqueline jake james jamie jan jane janet janice jared jasmine jason javier jean jeffrey jennifer jenny jeremy
        jerome jessica jesus jill jim joan joanna joanne joe joel johan john jonas jonathan jordan jorge jose joseph
        josh joshua joyce juan judith judy julia julian julie jurgen justin kai kamala karen karim karl kate katherine
        kathleen kathryn katie kavya keith kelly kenji kenneth kevin khalid kim kimberly kofi kristen kurt kwame kyle
        lakshmi lars laura lauren lea leah lena leo leon leonardo liam lila linda lisa logan lorenzo louis louise lucas
        lucia lucy luis luisa luka lukas luke lydia madison magdalena maja malik manuel marco marcus margaret maria
        mariam marie marina mario marion marta martha martin mary mateo matilda matteo matthew maureen max maya megan
        mehmet melanie melissa mia michael michelle miguel mika mila milan mohamed mohammed monica muhammad nadia nancy
        naomi natalia natalie nathan neha nicholas nicola nicole niklas nina noah noor nora norman oliver olivia omar
        oscar pablo pamela paolo patricia patrick paul paula pedro peter philip phoebe pierre pooja priya rachel rafael
        rahul raj ramon rani rashid raymond rebecca regina renee ricardo richard rita roberto robert robin rohan roman
        ronald rosa ruby russell ruth ryan sabine sadie sally samantha samir samuel sandra sanjay sara sarah sean
        sebastian sergio shannon sharon shirley simon sofia sonia sophia sophie stefan stefanie stephanie stephen steven
        susan svetlana sven tamara tanya teresa terry theo theresa thomas tiffany timothy tobias tom tomas tony tracy
        tyler ursula valentina valerie vanessa vera veronica victor victoria vikram vincent viola virginia walter wei
        wendy william xavier yasmin yusuf yuki zachary zara zoe
        """

    /// The names, as folded keys.
    static let names: Set<String> = Set(text.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))

    /// Whether `key` is a given name that is not ordinary or clinical vocabulary.
    static func isUnambiguousName(_ key: String) -> Bool { names.contains(key) && !ClinicalVocabulary.contains(key) }
}
