import CohortIO
import CohortCore
package import Foundation

/// The coordinator's map from a source's user ids to study codes: a CSV file with the header
/// `user_id,participant` and, optionally, `shift_days` (the day offset an export's dates were
/// shifted by, as `cohort data pseudonym-map` writes it; import moves dates back by it); other
/// columns are ignored. Errors name the file's rows; ids are never repeated in messages.
package struct UserMap: Sendable {
    /// User id → study code.
    public var codes: [String: String] = [:]
    /// User id → shift in days, for users whose row gives one.
    public var shifts: [String: Int] = [:]

    /// Reads `url`. Throws on a missing header column, an empty field, a user listed twice, a
    /// shift that is not a whole number, or a study code that is not on the roster (`codes`).
    package init(codes: [String: String] = [:], shifts: [String: Int] = [:]) {
        self.codes = codes
        self.shifts = shifts
    }

    public static func load(_ url: URL, codes: Set<String>) throws -> UserMap {
        let file = url.path
        guard FileManager.default.isReadableFile(atPath: file) else {
            throw CohortError(.notFound, "cannot read the user map", at: .init(file: file), hint: "check the --user-map path")
        }
        let reader = try CSVReader(url: url)
        guard let header = try reader.next() else {
            throw CohortError.invalid("the user map is empty", file: file, line: 1, hint: "the first line is the header: user_id,participant")
        }
        let names = header.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        guard let userColumn = names.firstIndex(of: "user_id"), let codeColumn = names.firstIndex(of: "participant") else {
            throw CohortError.invalid("the header lacks user_id or participant", file: file, line: header.line, hint: "the first line is the header: user_id,participant")
        }
        let shiftColumn = names.firstIndex(of: "shift_days")
        var map = UserMap()
        while let row = try reader.next() {
            guard row.fields.count > max(userColumn, codeColumn) else {
                throw CohortError.invalid("expected \(names.count) fields, found \(row.fields.count)", file: file, line: row.line)
            }
            let user = row.fields[userColumn].trimmingCharacters(in: .whitespaces)
            let code = row.fields[codeColumn].trimmingCharacters(in: .whitespaces)
            if user.isEmpty && code.isEmpty { continue }
            guard !user.isEmpty else { throw CohortError.invalid("the user id is empty", file: file, line: row.line, field: "user_id") }
            guard codes.contains(code) else {
                throw CohortError.invalid("the study code is not on the roster", file: file, line: row.line, field: "participant",
                    hint: "enroll the participant first (cohort participant import), or fix the code")
            }
            if let shiftColumn, shiftColumn < row.fields.count, !row.fields[shiftColumn].isEmpty {
                guard let days = Int(row.fields[shiftColumn].trimmingCharacters(in: .whitespaces)), abs(days) <= 3650 else {
                    throw CohortError.invalid("expected a whole number of days", file: file, line: row.line, field: "shift_days")
                }
                map.shifts[user] = days
            }
            guard map.codes.updateValue(code, forKey: user) == nil else {
                throw CohortError.invalid("the user id is listed twice", file: file, line: row.line, field: "user_id", hint: "map each user once")
            }
        }
        return map
    }
}
