package import CohortCore

/// A metric column of the app backend's `health_metrics` table (one row per user, day and
/// source), with the record kind it becomes. Columns with no kind are counted as not collected:
/// the day's minimum and maximum heart rate (a `heart_rate` record of the same day, source and
/// start already carries the average, and the store keeps one record per participant, kind,
/// start and source), the sleep stages and awake minutes (likewise beside `sleep_hours`).
package enum HealthMetric: String, CaseIterable, Sendable {
    case steps
    case distanceMeters = "distance_meters"
    case heartRateAvg = "heart_rate_avg"
    case heartRateMin = "heart_rate_min"
    case heartRateMax = "heart_rate_max"
    case heartRateResting = "heart_rate_resting"
    case heartRateVariability = "heart_rate_variability"
    case bloodOxygenPercent = "blood_oxygen_percent"
    case respiratoryRate = "respiratory_rate"
    case weightKg = "weight_kg"
    case bodyFatPercent = "body_fat_percent"
    case bmi
    case sleepHours = "sleep_hours"
    case sleepDeepHours = "sleep_deep_hours"
    case sleepRemHours = "sleep_rem_hours"
    case sleepLightHours = "sleep_light_hours"
    case sleepAwakeMinutes = "sleep_awake_minutes"
    case waterMl = "water_ml"
    case caffeineMg = "caffeine_mg"
    case mindfulMinutes = "mindful_minutes"
    case activeMinutes = "active_minutes"
    case caloriesBurned = "calories_burned"

    /// The record kind a day's value becomes, nil when cohort has none for it.
    public var kind: RecordKind? {
        switch self {
        case .steps: .steps
        case .heartRateAvg: .heartRate
        case .heartRateResting: .restingHeartRate
        case .heartRateVariability: .hrvSDNN
        case .bloodOxygenPercent: .spo2
        case .respiratoryRate: .respiratoryRate
        case .weightKg: .bodyMass
        case .sleepHours: .sleepDuration
        case .distanceMeters: .distanceWalkingRunning
        case .bodyFatPercent: .bodyFatPercentage
        case .bmi: .bmi
        case .waterMl: .waterIntake
        case .caffeineMg: .caffeineIntake
        case .mindfulMinutes: .mindfulSession
        // The app's active minutes are what HealthKit calls exercise time (Health Connect: active minutes).
        case .activeMinutes: .exerciseTime
        // Whether the app's calories are active energy or the total (active + basal) is not
        // written anywhere in the table: left out with that reason (``leftOutReason``), not guessed.
        case .caloriesBurned: nil
        case .heartRateMin, .heartRateMax, .sleepDeepHours, .sleepRemHours, .sleepLightHours, .sleepAwakeMinutes: nil
        }
    }

    /// Why a column with no kind is not imported (the summary's reason).
    package var leftOutReason: String {
        switch self {
        case .caloriesBurned: "left out: calories_burned (the table does not say whether it is active or total energy)"
        default: "not collected: \(rawValue)"
        }
    }

    /// The column's UCUM unit.
    public var unit: String {
        switch self {
        case .steps: "{steps}"
        case .distanceMeters: "m"
        case .heartRateAvg, .heartRateMin, .heartRateMax, .heartRateResting, .respiratoryRate: "/min"
        case .heartRateVariability: "ms"
        case .bloodOxygenPercent, .bodyFatPercent: "%"
        case .weightKg: "kg"
        case .bmi: "kg/m2"
        case .sleepHours, .sleepDeepHours, .sleepRemHours, .sleepLightHours: "h"
        case .sleepAwakeMinutes, .mindfulMinutes, .activeMinutes: "min"
        case .caloriesBurned: "kcal"
        case .waterMl: "mL"
        case .caffeineMg: "mg"
        }
    }

    /// The key in the sync API's `metrics` object (`heartRateAvg`).
    package var syncName: String {
        let parts = rawValue.split(separator: "_")
        return parts.enumerated().map { i, p in i == 0 ? String(p) : p.prefix(1).uppercased() + p.dropFirst() }.joined()
    }

    static let bySyncName: [String: HealthMetric] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.syncName, $0) })
}
