/// A benchmark cohort size: how many synthetic participants, each with 90 days of symptom logs,
/// hourly heart rate, resting heart rate, HRV, steps, sleep, medication doses, weather and
/// free-text notes with planted identifiers (about 2,700 records per participant).
enum BenchSize: String, CaseIterable, Sendable {
    case s = "S"
    case m = "M"
    case l = "L"
    case xl = "XL"
    /// ~8.5M records from M's 372 participants: a heart-rate sample every 5 minutes. Against M,
    /// it shows how memory grows with records alone (XL grows records and participants).
    case xlDense = "XL-DENSE"

    /// Participants for the size (~100k, ~1M, ~5M, ~10M records).
    var participants: Int {
        switch self {
        case .s: 37
        case .m: 372
        case .l: 1_860
        case .xl: 3_720
        case .xlDense: 372
        }
    }

    var approximateRecords: String {
        switch self {
        case .s: "~100k"
        case .m: "~1M"
        case .l: "~5M"
        case .xl: "~10M"
        case .xlDense: "~8.5M"
        }
    }

    /// Minutes past each hour with a heart-rate sample.
    var heartRateMinutes: [Int] {
        self == .xlDense ? Array(stride(from: 0, to: 60, by: 5)) : [0]
    }
}
