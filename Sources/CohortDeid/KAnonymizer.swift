public import CohortCore

/// Makes a participant table k-anonymous over declared quasi-identifiers by local suppression.
///
/// Supported quasi-identifiers: `participant.birth_date` (birth year), `participant.age` (age
/// band), `participant.sex`, `participant.zip` (ZIP3) and `participant.time_zone`. Missing values
/// (nil) are a value of their own. The ladder, repeated until every class has at least k rows:
///
/// 1. find the rows in classes smaller than k;
/// 2. among the quasi-identifiers those rows still carry, take the one with the most distinct
///    values among them (ties: ZIP3, birth year, age band, time zone, sex) and set it to nil in
///    those rows only — they merge with other rows that lack it;
/// 3. rows whose quasi-identifiers are all suppressed and whose class is still smaller than k
///    are removed (suppressed entirely). Their records and consents must be left out too:
///    ``KAnonymization/suppressedPseudonyms`` names them.
///
/// Suppression rather than coarser bands keeps every value that is written true (a birth year
/// rounded to a decade would look like a real year). Deterministic: the same input gives the
/// same output.
public struct KAnonymizer: Sendable {
    /// A quasi-identifier column.
    public enum QuasiIdentifier: String, Sendable, Hashable, Codable, CaseIterable {
        case zip3 = "participant.zip"
        case birthYear = "participant.birth_date"
        case ageBand = "participant.age"
        case timeZone = "participant.time_zone"
        case sex = "participant.sex"

        func value(_ row: DeidentifiedParticipant) -> String? {
            switch self {
            case .zip3: row.zip3
            case .birthYear: row.birthYear.map(String.init)
            case .ageBand: row.ageBand
            case .timeZone: row.timeZone
            case .sex: row.sex?.rawValue
            }
        }

        func clear(_ row: inout DeidentifiedParticipant) {
            switch self {
            case .zip3: row.zip3 = nil
            case .birthYear: row.birthYear = nil
            case .ageBand: row.ageBand = nil
            case .timeZone: row.timeZone = nil
            case .sex: row.sex = nil
            }
        }
    }

    public let k: Int
    public let quasiIdentifiers: [QuasiIdentifier]

    /// Throws when `k` < 1 or a quasi-identifier is not one of the supported columns.
    public init(k: Int, quasiIdentifiers: [String]) throws {
        guard k >= 1 else {
            throw CohortError(
                .invalidInput, "k-anonymity needs k of at least 1", at: .init(field: "deidentification.k_anonymity.k"),
                hint: "use k = 5 or more for shared data")
        }
        var columns: [QuasiIdentifier] = []
        for name in quasiIdentifiers {
            guard let column = QuasiIdentifier(rawValue: name) else {
                throw CohortError(
                    .invalidInput, "unsupported quasi-identifier \(name)", at: .init(field: "deidentification.k_anonymity.quasi_identifiers"),
                    hint: "use \(QuasiIdentifier.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if !columns.contains(column) { columns.append(column) }
        }
        self.k = k
        self.quasiIdentifiers = QuasiIdentifier.allCases.filter(columns.contains)
    }

    /// The anonymizer the policy declares, or nil when it declares none.
    public init?(policy: DeidentificationPolicy) throws {
        guard let settings = policy.kAnonymity else { return nil }
        try self.init(k: settings.k, quasiIdentifiers: settings.quasiIdentifiers)
    }

    /// The equivalence class key of `row`.
    func key(_ row: DeidentifiedParticipant) -> [String?] { quasiIdentifiers.map { $0.value(row) } }

    /// `rows` made k-anonymous, with what was done.
    public func apply(_ rows: [DeidentifiedParticipant]) -> KAnonymization {
        var rows = rows
        var alive = [Bool](repeating: true, count: rows.count)
        var suppressedValues: [QuasiIdentifier: Int] = [:]
        while true {
            var classes: [[String?]: [Int]] = [:]
            for i in rows.indices where alive[i] { classes[key(rows[i]), default: []].append(i) }
            let small = classes.values.filter { $0.count < k }.flatMap { $0 }.sorted()
            if small.isEmpty { break }
            var best: QuasiIdentifier?
            var bestDistinct = 0
            for column in quasiIdentifiers {
                let distinct = Set(small.compactMap { column.value(rows[$0]) }).count
                if distinct > bestDistinct {
                    best = column
                    bestDistinct = distinct
                }
            }
            guard let column = best else {
                for i in small { alive[i] = false }
                continue
            }
            for i in small where column.value(rows[i]) != nil {
                column.clear(&rows[i])
                suppressedValues[column, default: 0] += 1
            }
        }
        var kept: [DeidentifiedParticipant] = []
        var removed: Set<String> = []
        for i in rows.indices {
            if alive[i] { kept.append(rows[i]) } else { removed.insert(rows[i].pseudonym) }
        }
        var sizes: [[String?]: Int] = [:]
        for row in kept { sizes[key(row), default: 0] += 1 }
        let summary = KAnonymitySummary(
            requestedK: k, achievedK: sizes.values.min(), quasiIdentifiers: quasiIdentifiers.map(\.rawValue), classes: sizes.count,
            suppressedValues: Dictionary(uniqueKeysWithValues: suppressedValues.map { ($0.key.rawValue, $0.value) }),
            suppressedParticipants: removed.count)
        return KAnonymization(participants: kept, suppressedPseudonyms: removed, summary: summary)
    }
}

/// The result of ``KAnonymizer/apply(_:)``.
public struct KAnonymization: Sendable, Hashable {
    /// The rows to export, in input order, with suppressed values set to nil.
    public var participants: [DeidentifiedParticipant]
    /// Participants removed entirely: leave out their consents and records too.
    public var suppressedPseudonyms: Set<String>
    public var summary: KAnonymitySummary
}

/// What k-anonymization achieved, for the report.
public struct KAnonymitySummary: Sendable, Hashable, Codable {
    public var requestedK: Int
    /// The smallest class size after the pass (nil when no participant is left).
    public var achievedK: Int?
    public var quasiIdentifiers: [String]
    /// Number of equivalence classes after the pass.
    public var classes: Int
    /// Quasi-identifier → values set to nil.
    public var suppressedValues: [String: Int]
    /// Participants removed entirely.
    public var suppressedParticipants: Int

    public init(
        requestedK: Int, achievedK: Int?, quasiIdentifiers: [String], classes: Int, suppressedValues: [String: Int],
        suppressedParticipants: Int
    ) {
        self.requestedK = requestedK
        self.achievedK = achievedK
        self.quasiIdentifiers = quasiIdentifiers
        self.classes = classes
        self.suppressedValues = suppressedValues
        self.suppressedParticipants = suppressedParticipants
    }

    enum CodingKeys: String, CodingKey {
        case classes
        case requestedK = "requested_k"
        case achievedK = "achieved_k"
        case quasiIdentifiers = "quasi_identifiers"
        case suppressedValues = "suppressed_values"
        case suppressedParticipants = "suppressed_participants"
    }
}
