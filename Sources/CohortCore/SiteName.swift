import Foundation

/// A study site's name (`site-a`, `charite_berlin`): 1–64 characters of `a-z`, `0-9`, `-` and `_`.
///
/// A site is an organisational label (the hospital or clinic a participant was enrolled at), not
/// personal data: it may appear in messages and audit details. The name is used in PostgreSQL
/// role names (`cohort_site_<name>`), hence the narrow alphabet. Exports never carry it per
/// participant; a site-scoped export states its scope once (manifest, README).
package enum SiteName {
    /// The longest site name.
    package static let maximumLength = 64

    /// True when `text` is a valid site name.
    package static func isValid(_ text: String) -> Bool {
        guard (1...maximumLength).contains(text.utf8.count) else { return false }
        return text.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F }
    }

    /// The site name in `text` (surrounding spaces removed), or nil for an empty text; throws
    /// `.invalidInput` naming `file`, `line` and `field` when it is not a valid name.
    public static func parse(_ text: String?, file: String? = nil, line: Int? = nil, field: String = "site") throws -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespaces), !trimmed.isEmpty else { return nil }
        guard isValid(trimmed) else {
            throw CohortError.invalid(
                "expected a site name of 1–\(maximumLength) lowercase letters, digits, '-' or '_'", file: file, line: line, field: field,
                hint: "for example site-a or charite_berlin")
        }
        return trimmed
    }
}
