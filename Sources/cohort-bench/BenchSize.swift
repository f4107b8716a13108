/// A benchmark cohort size: how many synthetic participants, each with 90 days of symptom logs,
/// hourly heart rate, resting heart rate, HRV, steps, sleep, medication doses, weather and
/// free-text notes with planted identifiers (about 2,700 records per participant).
enum BenchSize: String, CaseIterable, Sendable {
    case s = "S"
    case m = "M"
    case l = "L"
    case xl = "XL"

    /// Participants for the size (~100k, ~1M, ~5M, ~10M records).
    var participants: Int {
        switch self {
        case .s: 37
        case .m: 372
        case .l: 1_860
        case .xl: 3_720
        }
    }

    var approximateRecords: String {
        switch self {
        case .s: "~100k"
        case .m: "~1M"
        case .l: "~5M"
        case .xl: "~10M"
        }
    }
}
