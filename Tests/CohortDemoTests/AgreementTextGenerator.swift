import CohortCore

/// Short texts for ``PatternEngineAgreementTests``: fragments that exercise every alternative of
/// the scrubber's patterns and their edges (dates in all forms, phones national and
/// international with extensions, emails plain and obfuscated, URLs, IPv4/6, SSNs, MRNs, ages,
/// streets, PO boxes, postcodes, serials, ids), cut, case-changed and glued with noise: digits,
/// separators, month and street words, vertical tabs, tabs, CR, punctuation and some non-ASCII
/// characters (which take the ICU route). Seeded, so a failure names its seed and text.
struct AgreementTextGenerator {
    var random: SeededRandom

    init(seed: UInt64) { random = SeededRandom(seed: seed) }

    static let fragments = [
        // Dates
        "2024-03-05", "2024/3/5", "2024.03.05T10:30", "2024-03-05T10:30:15.123Z", "2024-03-05 07:05+02:00", "2024-3-5T1:30-0530",
        "03/14/2024", "3-14-24", "14.03.2024", "1/2/345", "12/31/1999/", "14th of March, 2024", "March 14th 2024", "Mar. 14", "May 2024",
        "MAY 5", "may 5", "Sept 3rd", "dec 25, 2023", "Monday, the 14th of March", "tues. 3 June", "Thurs 12 jul 2022", "3/14", "14.3.",
        "1.2.3", "7/10", "2.5.", "31st", "sunday the 2nd of may",
        // Phones
        "(555) 123-4567", "555.123.4567 x123", "+1 555 123 4567 ext. 12", "1-555-123-4567", "+44 20 7946 0958", "+49 (0)30 1234567",
        "030/1234567", "01 23 45 67 89", "+33612345678", "98765 43210", "15551234567", "5551234567", "0412 345 678", "+91-98765-43210",
        "(02) 9876 5432", "555-1234", "10 000", "+1 (555) 123-4567 extension 99", "020 7946 0958",
        // Emails and URLs
        "jane.doe@example.com", "<mailto:a_b@x-y.co.uk>", "x%y+z@host.io", "a@b", "jane dot doe at gmail dot com",
        "jane[at]example[dot]com", "j(at)x(dot)org", "a {at} b {dot} net", "x [@] y [.] de", "https://x.org/a?b=c.", "www.example.com)",
        "ftp://h/p", "HTTP://EXAMPLE.ORG/", "example.com/path", "nhs.uk", "foo.co.uk/bar", "my-site.org.", "ok.No pain", "e.g. it",
        // IP addresses
        "192.168.0.1", "256.1.1.1", "10.0.0.255.", "2001:db8::1", "fe80::", "::1", "1:2:3:4:5:6:7:8", "a::b::c", "12:30::",
        // SSN, MRN, ages
        "123-45-6789", "123 45 6789", "SSN: 123456789", "social security no. 123-45-6789", "ssn#123 45 6789",
        "MRN: AB-12345", "medical record number #12-3456", "patient id 1234a", "chart no. X12345", "mrn12345",
        "aged 93", "age: 101", "93-year-old", "93 yo", "99 y/o", "95 yrs old", "93%", "age 93/100", "Aged 110", "age 93.5", "92 y.o.",
        // Addresses and postcodes
        "12 Maple Street", "12B N. Oak Ave, Apt 4", "4 Elm st.", "77 Long Hill Road suite 5", "3 bis, rue de la Paix",
        "12 allee des Roses", "Hauptstrasse 12", "Hauptstr. 5a", "Bergweg 3", "PO Box 123", "P.O. Box 9", "po box 44",
        "Springfield, IL 62704-1234", "New York NY 10027", "SW1A 1AA", "GIR 0AA", "M1 1AE", "10115 Berlin", "75001 Paris-Nord",
        "12 O'Neil Close", "9 St Mary Row",
        // Serials and ids
        "serial number: AB12-345", "S/N 12345", "sn#X1Y2Z3", "serial no. ABCDE", "AB-1234", "P-0001", "ABCDE-123", "X-12",
    ]

    static let noise = [
        "0", "7", "12", "365", "2024", "-", "/", ".", ":", ",", ";", "#", "+", "(", ")", "[", "]", "<", ">", "@", "'", "\"", "_", "%",
        "January", "feb", "Sept.", "MAY", "st", "Street", "rd", "Box", "dot", "at", "www", "x", "ext", "the", "of", "pain", "Dr",
        "\u{0B}", "\t", "\r", "\r\n", "\n", "\u{0C}", "\u{1C}", "  ",
    ]

    static let nonASCII = ["é", "ß", "ſ", "\u{212A}", "’", "٣", "\u{A0}", "Ⅻ", "ü", "İ", "\u{2028}", "😀"]

    static let glue = [" ", " ", " ", "", "\t", "\u{0B}", ", ", "-", "/", ".", "\n", "\r\n", ": "]

    /// Fragments the word pass (no digits) matches, for texts where one follows another with
    /// no space: a lookbehind there must see the end of the first.
    static let wordFragments = [
        "jane dot doe at gmail dot com", "jane[at]example[dot]com", "j(at)x(dot)org", "a {at} b {dot} net", "x [@] y [.] de",
        "example.com/path", "nhs.uk", "foo.co.uk/bar", "my-site.org", "mail.example.com",
    ]

    mutating func text() -> String {
        if random.next() % 16 == 0 {
            return random.pick(Self.wordFragments) + random.pick([".", "-", "_", "%", "+", "", "@", " "]) + random.pick(Self.wordFragments)
        }
        var parts: [String] = []
        for _ in 0..<(1 + Int(random.next() % 5)) {
            switch random.next() % 10 {
            case 0..<5: parts.append(fragment())
            case 5..<9: parts.append(random.pick(Self.noise))
            default: parts.append(random.next() % 3 == 0 ? random.pick(Self.nonASCII) : fragment())
            }
        }
        var text = ""
        for part in parts { text += (text.isEmpty ? "" : random.pick(Self.glue)) + part }
        // Now and then a non-ASCII character inside, which sends the text to ICU.
        if random.next() % 12 == 0 {
            let at = Int(random.next() % UInt64(text.count + 1))
            text.insert(contentsOf: random.pick(Self.nonASCII), at: text.index(text.startIndex, offsetBy: at))
        }
        return text
    }

    /// A fragment, sometimes case-changed, cut at either end, or with a character swapped.
    private mutating func fragment() -> String {
        var f = random.pick(Self.fragments)
        switch random.next() % 8 {
        case 0: f = f.uppercased()
        case 1: f = f.lowercased()
        case 2: f = String(f.dropFirst(Int(random.next() % 3)))
        case 3: f = String(f.dropLast(Int(random.next() % 3)))
        case 4 where !f.isEmpty:
            var chars = Array(f)
            chars[Int(random.next() % UInt64(chars.count))] = random.pick(["0", "9", " ", "-", ".", "/", ":", "a", "Z", "\u{0B}"])
            f = String(chars)
        default: break
        }
        return f
    }
}
