import CohortCore
import Foundation

/// A participant-level column of `participants.csv`: every one the export publishes is a
/// quasi-identifier (a value an adversary may know from elsewhere and link on).
///
/// Each has a generalization ladder, from the value as de-identified (level 0) to coarser
/// values; where the last level is "suppressed" the whole column is left empty:
///
/// | Column | Levels |
/// |---|---|
/// | `birth_year` | year → 5-year range `1980–1984` → 10-year range `1980–1989` → suppressed |
/// | `age_band` | policy bands → bands of two → bands of four (`90+` stays) → suppressed |
/// | `zip3` | ZIP3 → region (first digit, `9**`) → suppressed |
/// | `enrolled_on`, `withdrawn_at` | date → month `2025-03` → quarter `2025-Q1` → year → suppressed |
/// | `time_zone` | value → region (`America/Chicago` → `America`) → suppressed |
/// | `devices` | value → suppressed |
/// | `sex` | value only (single cells may be suppressed) |
/// | `utc_offset` | the participant's standard offset → UTC (`+00:00`: every time of every participant is then written in UTC); never blanked |
/// | `status` | value only, never blanked: FHIR needs the status |
package enum QuasiIdentifier: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case sex
    case birthYear = "birth_year"
    case ageBand = "age_band"
    case zip3
    case enrolledOn = "enrolled_on"
    case status
    case withdrawnAt = "withdrawn_at"
    case timeZone = "time_zone"
    case devices
    case utcOffset = "utc_offset"

    /// Declaration order (the order of `participants.csv`, and of tie-breaks).
    package static func < (lhs: QuasiIdentifier, rhs: QuasiIdentifier) -> Bool {
        let all = allCases
        return (all.firstIndex(of: lhs) ?? 0) < (all.firstIndex(of: rhs) ?? 0)
    }

    /// The highest generalization level (0: the column cannot be generalized).
    package var maxLevel: Int {
        switch self {
        case .birthYear, .ageBand: 3
        case .enrolledOn, .withdrawnAt: 4
        case .zip3, .timeZone: 2
        case .devices, .utcOffset: 1
        case .sex, .status: 0
        }
    }

    /// Whether single cells may be emptied in the last step (otherwise the row is removed).
    package var cellSuppressible: Bool { self != .status && self != .utcOffset }

    /// What level `level` of this column means, for the report.
    package func levelName(_ level: Int) -> String {
        if level == 0 { return "as de-identified" }
        if self == .utcOffset { return "UTC (every time written at +00:00)" }
        if level >= maxLevel { return "suppressed" }
        switch (self, level) {
        case (.birthYear, 1): return "5-year range"
        case (.birthYear, _): return "10-year range"
        case (.ageBand, 1): return "bands of two"
        case (.ageBand, _): return "bands of four"
        case (.zip3, _): return "region (first digit)"
        case (.enrolledOn, 1), (.withdrawnAt, 1): return "month"
        case (.enrolledOn, 2), (.withdrawnAt, 2): return "quarter"
        case (.enrolledOn, _), (.withdrawnAt, _): return "year"
        case (.timeZone, _): return "region (before the first '/')"
        default: return "suppressed"
        }
    }

    /// The published text of this column for `row` at `level` (nil: an empty cell).
    func value(_ row: DeidentifiedParticipant, level: Int, ageEdges: AgeBandEdges) -> String? {
        if self == .utcOffset { return level == 0 ? row.utcOffset : row.utcOffset.map { _ in "+00:00" } }
        if level >= maxLevel, maxLevel > 0 { return nil }
        switch self {
        case .sex: return row.sex?.rawValue
        case .status: return row.status?.rawValue
        case .utcOffset: return row.utcOffset
        case .devices: return row.devices.map { $0.joined(separator: ";") }
        case .zip3:
            guard let zip = row.zip3 else { return nil }
            return level == 0 ? zip : String(zip.prefix(1)) + "**"
        case .timeZone:
            guard let zone = row.timeZone else { return nil }
            guard level > 0, let slash = zone.firstIndex(of: "/") else { return zone }
            return String(zone[..<slash])
        case .birthYear:
            if let range = row.birthYearRange { return range }
            guard let year = row.birthYear else { return nil }
            if level == 0 { return String(year) }
            let width = level == 1 ? 5 : 10
            let start = year - ((year % width) + width) % width
            return "\(start)–\(start + width - 1)"
        case .ageBand:
            guard let band = row.ageBand else { return nil }
            return level == 0 ? band : ageEdges.widen(band, level: level)
        case .enrolledOn:
            if let period = row.enrollmentPeriod { return period }
            guard let date = row.enrolledOn else { return nil }
            return Self.period(date, level: level)
        case .withdrawnAt:
            if let period = row.withdrawalPeriod { return period }
            guard let instant = row.withdrawnAt else { return nil }
            return level == 0 ? instant.iso8601 : Self.period(instant.localDate, level: level)
        }
    }

    /// A date at a level of the date ladder: the date, its month, quarter or year.
    static func period(_ date: CivilDate, level: Int) -> String {
        let year = fourDigitYear(date.year)
        switch level {
        case 0: return date.description
        case 1: return year + "-" + (date.month < 10 ? "0" : "") + String(date.month)
        case 2: return year + "-Q" + String((date.month - 1) / 3 + 1)
        default: return year
        }
    }

    /// Writes the published value back into `row`, in the field writers read for this column.
    func store(_ published: String?, level: Int, into row: inout DeidentifiedParticipant) {
        switch self {
        case .sex: if published == nil { row.sex = nil }
        case .status: if published == nil { row.status = nil }
        case .utcOffset:
            row.utcOffset = published
            if level > 0 { row.withdrawnAt?.utcOffsetSeconds = 0 }
        case .devices: if published == nil { row.devices = nil }
        case .zip3: row.zip3 = published
        case .timeZone: row.timeZone = published
        case .ageBand: row.ageBand = published
        case .birthYear:
            guard level > 0 || published == nil else { return }
            row.birthYear = nil
            row.birthYearRange = level > 0 ? published : nil
        case .enrolledOn:
            guard level > 0 || published == nil else { return }
            row.enrolledOn = nil
            row.enrollmentPeriod = level > 0 ? published : nil
        case .withdrawnAt:
            guard level > 0 || published == nil else { return }
            row.withdrawnAt = nil
            row.withdrawalPeriod = level > 0 ? published : nil
        }
    }
}

/// A year with at least four digits (`0987`).
func fourDigitYear(_ year: Int) -> String {
    let digits = String(abs(year))
    return (year < 0 ? "-" : "") + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
}

/// The band edges found in an `age_band` column, for widening bands consistently: a wider band
/// is the union of adjacent original bands (every 2nd, then every 4th edge kept; the highest
/// edge and the `90+` band always stay).
struct AgeBandEdges: Sendable {
    let edges: [Double]
    /// ``widen(_:level:)`` of each label seen at init, at levels 1 and 2 (the anonymizer asks
    /// for the same few labels once per row and step).
    private var widened: [String: (String, String)] = [:]

    /// The edges of every band label in `labels`.
    init(labels: some Sequence<String>) {
        var set: Set<Double> = []
        var seen: Set<String> = []
        for label in labels where seen.insert(label).inserted {
            guard let (lower, upper) = Self.parse(label) else { continue }
            if let lower { set.insert(lower) }
            if let upper { set.insert(upper) }
        }
        edges = set.sorted()
        for label in seen { widened[label] = (widening(label, level: 1), widening(label, level: 2)) }
    }

    /// Lower and upper bound of a band label (`<18`, `18–<30`, `≥80`, or a plain age `45`);
    /// nil when the label is not a band (e.g. `90+`, or text from a `generalize` map).
    static func parse(_ label: String) -> (Double?, Double?)? {
        if label.hasPrefix("<") { return Double(label.dropFirst()).map { (nil, $0) } }
        if label.hasPrefix("≥") { return Double(label.dropFirst()).map { ($0, nil) } }
        if let dash = label.range(of: "–<") {
            guard let lower = Double(label[..<dash.lowerBound]), let upper = Double(label[dash.upperBound...]) else { return nil }
            return (lower, upper)
        }
        if let age = Int(label) { return (Double(age), Double(age + 1)) }
        return nil
    }

    /// The wider band containing `label` at `level` (1: every 2nd edge, 2: every 4th).
    func widen(_ label: String, level: Int) -> String {
        if level == 1 || level == 2, let known = widened[label] { return level == 1 ? known.0 : known.1 }
        return widening(label, level: level)
    }

    /// ``widen(_:level:)`` computed from the edges (no memo).
    func widening(_ label: String, level: Int) -> String {
        guard let (lower, _) = Self.parse(label), !edges.isEmpty else { return label }
        let stride = level == 1 ? 2 : 4
        var coarse = edges.enumerated().filter { $0.offset % stride == 0 }.map(\.element)
        if let last = edges.last, coarse.last != last { coarse.append(last) }
        guard let lower else { return "<" + SafeHarbor.format(coarse[0]) }
        guard let index = coarse.lastIndex(where: { $0 <= lower }) else { return "<" + SafeHarbor.format(coarse[0]) }
        let from = coarse[index]
        guard index + 1 < coarse.count else { return "≥" + SafeHarbor.format(from) }
        return SafeHarbor.format(from) + "–<" + SafeHarbor.format(coarse[index + 1])
    }
}
