import CohortCompliance
import Foundation

/// What an Apple Health import did, per HealthKit type, and what it left out.
///
/// For every type `seen` = `imported` + `duplicates` + `outsideStudyPeriod` + `notCollected` +
/// `unitRefused` + `valueRefused` + `notConsented`: each sample is counted exactly once.
public struct AppleHealthImportSummary: Sendable, Codable, Equatable {
    /// One HealthKit type's counts.
    public struct TypeCounts: Sendable, Codable, Equatable {
        /// The HealthKit identifier, or a workout's activity type.
        public var type: String
        /// The record kind it maps to, nil when cohort has none.
        public var kind: String?
        /// Samples of this type read from the export (the sum of the counts below).
        public var seen = 0
        /// Newly stored.
        public var imported = 0
        /// Already stored (same participant, kind, start and source), or repeated within the export.
        public var duplicates = 0
        /// Before enrollment, after the study period, or in the future.
        public var outsideStudyPeriod = 0
        /// No cohort kind, a kind the protocol does not collect, or a sleep value that is not sleep.
        public var notCollected = 0
        /// A unit cohort does not convert for the kind.
        public var unitRefused = 0
        /// Missing, not a number, out of the kind's range, or not whole where it must be.
        public var valueRefused = 0
        /// At a time the participant had no valid consent, or after withdrawal.
        public var notConsented = 0

        enum CodingKeys: String, CodingKey {
            case type, kind, seen, imported, duplicates
            case outsideStudyPeriod = "outside_study_period"
            case notCollected = "not_collected"
            case unitRefused = "unit_refused"
            case valueRefused = "value_refused"
            case notConsented = "not_consented"
        }
    }

    /// The input as given.
    public var file: String
    /// The participant's study code (the coordinator's view; never exported).
    public var participant: String
    /// Per type, sorted by type.
    public var types: [TypeCounts]
    /// Elements and files not imported, by what they are.
    public var skipped: [String: Int]
    /// The `Me` check: `matched`, `absent` (no Me element or nothing to compare).
    public var meCheck: String
    /// Wall-clock seconds the import took.
    public var seconds: Double

    enum CodingKeys: String, CodingKey {
        case file, participant, types, skipped, seconds
        case meCheck = "me_check"
    }

    /// Sum over all types.
    public var total: TypeCounts {
        types.reduce(into: TypeCounts(type: "total")) { t, c in
            t.seen += c.seen
            t.imported += c.imported
            t.duplicates += c.duplicates
            t.outsideStudyPeriod += c.outsideStudyPeriod
            t.notCollected += c.notCollected
            t.unitRefused += c.unitRefused
            t.valueRefused += c.valueRefused
            t.notConsented += c.notConsented
        }
    }

    /// The summary as a text table, then the skipped elements and files.
    public func renderTable() -> String {
        var table = TextTable(
            header: ["type", "kind", "seen", "imported", "duplicates", "outside period", "not collected", "unit refused", "value refused", "not consented"],
            alignments: [.left, .left] + Array(repeating: .right, count: 8))
        for c in types + [total] {
            table.append([
                c.type, c.kind ?? "-", String(c.seen), String(c.imported), String(c.duplicates), String(c.outsideStudyPeriod), String(c.notCollected),
                String(c.unitRefused), String(c.valueRefused), String(c.notConsented),
            ])
        }
        var text = table.render()
        if !skipped.isEmpty {
            text += "\nNot imported as records (counted):\n" + skipped.sorted { $0.key < $1.key }.map { "  \($0.key): \($0.value)" }.joined(separator: "\n") + "\n"
        }
        text += "Me (date of birth, sex) against the roster: \(meCheck) (never stored)\n"
        return text
    }
}
