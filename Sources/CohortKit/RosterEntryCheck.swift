import CohortCore
import Foundation

/// The problems of one roster entry, field by field, in the order a coordinator reads the
/// entry; each names the file, line and field and what was expected, never the value.
struct RosterEntryCheck {
    let file: String?
    let line: Int?
    private(set) var problems: [CohortError] = []

    init(file: String?, line: Int?) {
        self.file = file
        self.line = line
    }

    mutating func bad(_ field: String, _ message: String, hint: String? = nil) {
        problems.append(CohortError.invalid(message, file: file, line: line, field: field, hint: hint))
    }

    /// The trimmed text, nil when absent or blank.
    static func optional(_ text: String?) -> String? {
        guard let t = text?.trimmingCharacters(in: .whitespaces), !t.isEmpty else { return nil }
        return t
    }

    /// The enrollment date (not after tomorrow, UTC) and the optional date of birth (not after
    /// enrollment, an age of at most 125).
    mutating func dates(_ e: RosterEntry, today: CivilDate) -> (enrolled: CivilDate?, birth: CivilDate?) {
        let enrolled = CivilDate(iso: e.enrolledOn.trimmingCharacters(in: .whitespaces))
        if let enrolled {
            if enrolled > today.adding(days: 1) { bad("enrolled_on", "the enrollment date is in the future") }
        } else {
            bad("enrolled_on", "expected an existing date YYYY-MM-DD")
        }
        guard let text = e.birthDate?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return (enrolled, nil) }
        guard let date = CivilDate(iso: text) else {
            bad("birth_date", "expected an existing date YYYY-MM-DD")
            return (enrolled, nil)
        }
        if let enrolled, date > enrolled {
            bad("birth_date", "the date of birth is after the enrollment date")
        } else if let enrolled, date.age(on: enrolled) > 125 {
            bad("birth_date", "the date of birth gives an age over 125")
        } else {
            return (enrolled, date)
        }
        return (enrolled, nil)
    }

    /// The sex of `text`. "X" (passports, some EHRs) means "unspecified" to some sources and
    /// "another identity" to others: guessing would mislabel someone, so it is refused with the
    /// two choices.
    mutating func sex(_ text: String) -> Sex? {
        if text.trimmingCharacters(in: .whitespaces).lowercased() == "x" {
            bad(
                "sex", "the marker X is ambiguous (unspecified, or another identity): write other or unknown",
                hint: "other = another identity than female or male; unknown = not given or not known")
            return nil
        }
        guard let sex = Sex(lenient: text) else {
            bad("sex", "expected female, male, other or unknown")
            return nil
        }
        return sex
    }

    /// The optional email, phone and ZIP code, each checked for its shape.
    mutating func contacts(_ e: RosterEntry) -> (email: String?, phone: String?, zip: String?) {
        let email = Self.optional(e.email)
        if let email, email.range(of: #"^[^@\s]+@[^@\s]+\.[^@\s]+$"#, options: .regularExpression) == nil {
            bad("email", "expected an email address like name@example.org")
        }
        let phone = Self.optional(e.phone)
        if let phone, phone.filter(\.isNumber).count < 7 || phone.range(of: #"^[0-9+() .\-]+$"#, options: .regularExpression) == nil {
            bad("phone", "expected a phone number of digits, spaces, + ( ) . and -")
        }
        let zip = Self.optional(e.zip)
        if let zip, zip.range(of: #"^[0-9]{5}(-[0-9]{4})?$"#, options: .regularExpression) == nil {
            bad("zip", "expected a 5-digit ZIP code (or ZIP+4)")
        }
        return (email, phone, zip)
    }

    /// The optional site name.
    mutating func site(_ text: String?) -> String? {
        do {
            return try SiteName.parse(text, file: file, line: line)
        } catch let error as CohortError {
            problems.append(error)
        } catch {
            bad("site", "expected a site name")
        }
        return nil
    }
}
