package import CohortCore

/// How the Health app's sample types map to cohort's record kinds, and how Apple's unit strings
/// map to UCUM. A type that is not in ``kinds`` has no cohort record kind: it is counted as
/// "not collected by the protocol", never stored. Workouts (`Workout` elements) become
/// `workout` records (see ``AppleHealthReader``).
package enum AppleHealthMapping {
    /// HealthKit type identifier → record kind.
    public static let kinds: [String: RecordKind] = [
        "HKQuantityTypeIdentifierHeartRate": .heartRate,
        "HKQuantityTypeIdentifierRestingHeartRate": .restingHeartRate,
        "HKQuantityTypeIdentifierHeartRateVariabilitySDNN": .hrvSDNN,
        "HKQuantityTypeIdentifierStepCount": .steps,
        "HKQuantityTypeIdentifierOxygenSaturation": .spo2,
        "HKQuantityTypeIdentifierRespiratoryRate": .respiratoryRate,
        "HKQuantityTypeIdentifierBodyMass": .bodyMass,
        "HKCategoryTypeIdentifierSleepAnalysis": .sleepDuration,
        "HKQuantityTypeIdentifierBodyFatPercentage": .bodyFatPercentage,
        "HKQuantityTypeIdentifierBodyMassIndex": .bmi,
        "HKQuantityTypeIdentifierDistanceWalkingRunning": .distanceWalkingRunning,
        "HKQuantityTypeIdentifierFlightsClimbed": .flightsClimbed,
        "HKQuantityTypeIdentifierActiveEnergyBurned": .activeEnergy,
        "HKQuantityTypeIdentifierBasalEnergyBurned": .basalEnergy,
        "HKQuantityTypeIdentifierAppleExerciseTime": .exerciseTime,
        "HKQuantityTypeIdentifierDietaryWater": .waterIntake,
        "HKQuantityTypeIdentifierDietaryCaffeine": .caffeineIntake,
        "HKCategoryTypeIdentifierMindfulSession": .mindfulSession,
    ]

    /// The sleep analysis values that are sleep (stored as `sleep_duration` in hours, with the
    /// stage as text); in-bed and awake periods are not sleep and are counted as not collected.
    package static let sleepStages: [String: String] = [
        "HKCategoryValueSleepAnalysisAsleep": "asleep",
        "HKCategoryValueSleepAnalysisAsleepUnspecified": "asleep",
        "HKCategoryValueSleepAnalysisAsleepCore": "core",
        "HKCategoryValueSleepAnalysisAsleepDeep": "deep",
        "HKCategoryValueSleepAnalysisAsleepREM": "rem",
    ]

    /// Apple's unit string → the UCUM unit cohort's conversions know, and a factor applied first
    /// (Apple writes oxygen saturation and body fat as a fraction with unit `%`). A unit Apple
    /// writes for another kind of quantity (a `count` for a distance) is refused.
    package static func ucum(_ appleUnit: String, kind: RecordKind) -> (unit: String, factor: Double)? {
        switch (appleUnit, kind) {
        case ("%", .spo2), ("%", .bodyFatPercentage): ("%", 100)
        case ("count/min", _): ("/min", 1)
        case ("count", .steps): ("{steps}", 1)
        case ("count", .flightsClimbed): ("{flights}", 1)
        // HealthKit's BMI unit is a plain count (kg/m² is implied).
        case ("count", .bmi): ("kg/m2", 1)
        case ("ms", _): ("ms", 1)
        case ("s", _): ("s", 1)
        case ("kg", _): ("kg", 1)
        case ("g", _): ("g", 1)
        case ("mg", _): ("mg", 1)
        case ("mcg", _): ("ug", 1)
        case ("lb", _): ("[lb_av]", 1)
        case ("min", _): ("min", 1)
        case ("hr", _): ("h", 1)
        case ("m", _): ("m", 1)
        case ("km", _): ("km", 1)
        case ("cm", _): ("cm", 1)
        case ("mi", _): ("[mi_i]", 1)
        case ("ft", _): ("[ft_i]", 1)
        case ("yd", _): ("[yd_i]", 1)
        case ("kcal", _): ("kcal", 1)
        // Apple's `Cal` is the food Calorie, a kilocalorie.
        case ("Cal", _): ("[Cal]", 1)
        case ("kJ", _): ("kJ", 1)
        case ("cal", _): ("cal", 1)
        case ("mL", _): ("mL", 1)
        case ("L", _): ("L", 1)
        case ("dL", _): ("dL", 1)
        case ("cL", _): ("cL", 1)
        case ("fl_oz_us", _): ("[foz_us]", 1)
        default: nil
        }
    }

    /// `value` in `appleUnit` converted to `kind`'s canonical unit, nil when the unit is refused.
    package static func canonicalValue(_ value: Double, appleUnit: String, kind: RecordKind) -> Double? {
        guard let (unit, factor) = ucum(appleUnit, kind: kind) else { return nil }
        return Units.toCanonical(value * factor, unit: unit, kind: kind)
    }
}
