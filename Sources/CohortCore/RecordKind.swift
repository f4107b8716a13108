/// A family of data a protocol collects; each export writes one table per family.
public enum DataType: String, Sendable, Codable, CaseIterable, Comparable {
    case symptomLog = "symptom_log"
    case biometric
    case medicationLog = "medication_log"
    case flareEvent = "flare_event"
    case environment
    case migraineEntry = "migraine_entry"
    case dailyCheckin = "daily_checkin"
    case menstrualCycle = "menstrual_cycle"
    /// Movement and energy: distance, flights, energy burned, exercise minutes, workouts,
    /// mindfulness sessions (what HealthKit's activity types record).
    case activity
    /// What a participant drank: water and caffeine, measured (mL, mg) rather than rated.
    case intake

    /// The kinds of record that belong to this family.
    public var kinds: [RecordKind] { RecordKind.allCases.filter { $0.dataType == self } }

    /// The table name in exports (`symptom_logs.csv`).
    package var tableName: String {
        switch self {
        case .symptomLog: "symptom_logs"
        case .biometric: "biometrics"
        case .medicationLog: "medications"
        case .flareEvent: "flares"
        case .environment: "environment"
        case .migraineEntry: "migraine_entries"
        case .dailyCheckin: "checkins"
        case .menstrualCycle: "menstrual_cycle"
        case .activity: "activity"
        case .intake: "intake"
        }
    }

    public static func < (lhs: DataType, rhs: DataType) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }

    /// Hashes the case (``CaseHash``), not its raw string.
    public func hash(into hasher: inout Hasher) { hasher.combine(CaseHash.index(of: self)) }
    /// What a `Set` or `Dictionary` hashes: the case, as ``hash(into:)``.
    public func _rawHashValue(seed: Int) -> Int { CaseHash.index(of: self)._rawHashValue(seed: seed) }

    /// The case's index in `allCases` (``CaseHash``), for tables indexed by type. Other modules
    /// call this, not the generic ``CaseHash/index(of:)``: that is specialized only in this
    /// module, and from another it runs unspecialized, through witness tables (issue 28, ninth
    /// round).
    package var caseIndex: Int { CaseHash.index(of: self) }
}

/// The hash of a case of a field-less enum with a raw value — ``RecordKind``, ``DataType`` — as
/// its case's index (declaration order, which is `allCases`' order) instead of its raw string:
/// the standard library's default for a `RawRepresentable` type hashes the `rawValue`, a string
/// hashed byte by byte with SipHash on every lookup of a kind in a set or dictionary, and the
/// export looks kinds up several times per record (compliance, the writer's collected and daily
/// total kinds; issue 28, eighth round). Equal cases have equal indexes and different cases
/// different ones, so it is consistent with `==`; hash values are seeded per process, so no order
/// or value of them was ever stable to depend on. (`hashValue` stays the default, the raw
/// string's: it is also consistent with `==`, and implementing it is deprecated.)
/// `HashingTests` holds the index to `allCases`' for every case.
package enum CaseHash {
    /// The case's index: the one byte a field-less enum of at most 256 cases is stored in.
    @inline(__always)
    package static func index<T: CaseIterable & RawRepresentable>(of value: T) -> Int {
        precondition(MemoryLayout<T>.size == 1, "CaseHash needs a field-less enum of at most 256 cases")
        return withUnsafeBytes(of: value) { Int($0[0]) }
    }
}

/// How a record kind carries its value.
package enum ValueShape: String, Sendable, Codable {
    /// A number in the kind's canonical unit (`value`).
    case numeric
    /// A text value from a vocabulary or free text (`text`), with an optional number.
    case text
    /// A number and a text (e.g. a medication name and its dose).
    case numericAndText = "numeric_and_text"
}

/// A code from a code system (LOINC, or cohort's local system for measures LOINC lacks).
package struct Coding: Sendable, Hashable, Codable {
    public var system: String
    public var code: String
    package var display: String

    package init(system: String, code: String, display: String) {
        self.system = system
        self.code = code
        self.display = display
    }

    package static let loincSystem = "http://loinc.org"
    /// cohort's own code system for measures without a LOINC code.
    package static let localSystem = "https://cohort.example.org/fhir/CodeSystem/cohort-measures"
}

/// Every kind of record cohort accepts, with its unit, range and code.
public enum RecordKind: String, Sendable, Codable, CaseIterable, Comparable {
    // symptom_log
    case pain
    case morningStiffness = "morning_stiffness"
    case fatigue
    case basdai
    // biometric
    case heartRate = "heart_rate"
    case restingHeartRate = "resting_heart_rate"
    case hrvSDNN = "hrv_sdnn"
    case steps
    case sleepDuration = "sleep_duration"
    case spo2
    case respiratoryRate = "respiratory_rate"
    case bodyMass = "body_mass"
    case bodyFatPercentage = "body_fat_percentage"
    case bmi
    // medication_log
    case medicationDose = "medication_dose"
    // flare_event
    case flare
    // environment
    case barometricPressure = "barometric_pressure"
    case ambientTemperature = "ambient_temperature"
    case relativeHumidity = "relative_humidity"
    // migraine_entry
    case migraineAttack = "migraine_attack"
    // daily_checkin
    case stress
    case hydration
    case caffeine
    // menstrual_cycle
    case menstrualCycleDay = "menstrual_cycle_day"
    // activity
    case distanceWalkingRunning = "distance_walking_running"
    case flightsClimbed = "flights_climbed"
    case activeEnergy = "active_energy"
    case basalEnergy = "basal_energy"
    case exerciseTime = "exercise_time"
    case workout
    case mindfulSession = "mindful_session"
    // intake
    case waterIntake = "water_intake"
    case caffeineIntake = "caffeine_intake"

    /// Hashes the case (``CaseHash``), not its raw string.
    public func hash(into hasher: inout Hasher) { hasher.combine(CaseHash.index(of: self)) }
    /// What a `Set` or `Dictionary` hashes: the case, as ``hash(into:)``.
    public func _rawHashValue(seed: Int) -> Int { CaseHash.index(of: self)._rawHashValue(seed: seed) }

    /// The case's index in `allCases` (``CaseHash``), for tables indexed by kind. Other modules
    /// call this, not the generic ``CaseHash/index(of:)``: that is specialized only in this
    /// module, and from another it runs unspecialized, through witness tables (issue 28, ninth
    /// round).
    package var caseIndex: Int { CaseHash.index(of: self) }

    package var dataType: DataType {
        switch self {
        case .pain, .morningStiffness, .fatigue, .basdai: .symptomLog
        case .heartRate, .restingHeartRate, .hrvSDNN, .steps, .sleepDuration, .spo2, .respiratoryRate, .bodyMass, .bodyFatPercentage, .bmi:
            .biometric
        case .medicationDose: .medicationLog
        case .flare: .flareEvent
        case .barometricPressure, .ambientTemperature, .relativeHumidity: .environment
        case .migraineAttack: .migraineEntry
        case .stress, .hydration, .caffeine: .dailyCheckin
        case .menstrualCycleDay: .menstrualCycle
        case .distanceWalkingRunning, .flightsClimbed, .activeEnergy, .basalEnergy, .exerciseTime, .workout, .mindfulSession: .activity
        case .waterIntake, .caffeineIntake: .intake
        }
    }

    package var shape: ValueShape {
        switch self {
        case .medicationDose: .numericAndText
        case .migraineAttack: .numericAndText
        case .workout: .numericAndText
        default: .numeric
        }
    }

    /// Whether a numeric value is required (a medication may be logged without a dose).
    package var requiresValue: Bool { self != .medicationDose && self != .flare }

    /// Whether `text` is required.
    package var requiresText: Bool { self == .medicationDose }

    /// The UCUM unit values are stored in.
    package var canonicalUnit: String {
        switch self {
        case .pain, .fatigue, .basdai, .stress, .hydration, .flare, .migraineAttack: "{score}"
        case .morningStiffness: "min"
        case .heartRate, .restingHeartRate, .respiratoryRate: "/min"
        case .hrvSDNN: "ms"
        case .steps: "{steps}"
        case .sleepDuration: "h"
        case .spo2, .relativeHumidity: "%"
        case .bodyMass: "kg"
        case .medicationDose: "mg"
        case .barometricPressure: "hPa"
        case .ambientTemperature: "Cel"
        case .caffeine: "{cup}"
        case .menstrualCycleDay: "d"
        case .bodyFatPercentage: "%"
        case .bmi: "kg/m2"
        case .distanceWalkingRunning: "m"
        case .flightsClimbed: "{flights}"
        case .activeEnergy, .basalEnergy: "kcal"
        case .exerciseTime, .workout, .mindfulSession: "min"
        case .waterIntake: "mL"
        case .caffeineIntake: "mg"
        }
    }

    /// Plausible values, in the canonical unit; outside them an import is rejected.
    public var range: ClosedRange<Double> {
        switch self {
        case .pain, .fatigue, .basdai, .flare, .migraineAttack: 0...10
        case .stress, .hydration: 1...5
        case .morningStiffness: 0...1440
        case .heartRate: 20...300
        case .restingHeartRate: 20...200
        case .respiratoryRate: 4...60
        case .hrvSDNN: 1...500
        case .steps: 0...100_000
        case .sleepDuration: 0...24
        case .spo2: 50...100
        case .relativeHumidity: 0...100
        case .bodyMass: 20...400
        case .medicationDose: 0...100_000
        case .barometricPressure: 870...1085
        case .ambientTemperature: -60...60
        case .caffeine: 0...30
        case .menstrualCycleDay: 1...60
        case .bodyFatPercentage: 2...75
        case .bmi: 8...100
        // Per sample: a sample may span a day (daily summaries) or a few minutes.
        case .distanceWalkingRunning: 0...150_000
        case .flightsClimbed: 0...1_000
        case .activeEnergy: 0...10_000
        case .basalEnergy: 0...5_000
        case .exerciseTime, .workout, .mindfulSession: 0...1440
        case .waterIntake: 0...20_000
        case .caffeineIntake: 0...3_000
        }
    }

    /// Whether values must be whole numbers.
    package var isInteger: Bool {
        switch self {
        case .steps, .stress, .hydration, .menstrualCycleDay, .caffeine, .flightsClimbed: true
        default: false
        }
    }

    /// The code exports use (LOINC where one exists, cohort's local system otherwise).
    package var coding: Coding {
        func loinc(_ code: String, _ display: String) -> Coding { Coding(system: Coding.loincSystem, code: code, display: display) }
        func local(_ display: String) -> Coding { Coding(system: Coding.localSystem, code: rawValue, display: display) }
        switch self {
        case .pain: return loinc("72514-3", "Pain severity - 0-10 verbal numeric rating [Score] - Reported")
        case .heartRate: return loinc("8867-4", "Heart rate")
        case .restingHeartRate: return loinc("40443-4", "Heart rate --resting")
        case .hrvSDNN: return loinc("80404-7", "R-R interval.standard deviation (Heart rate variability)")
        case .steps: return loinc("55423-8", "Number of steps in unspecified time Pedometer")
        case .sleepDuration: return loinc("93832-4", "Sleep duration")
        case .spo2: return loinc("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry")
        case .respiratoryRate: return loinc("9279-1", "Respiratory rate")
        case .bodyMass: return loinc("29463-7", "Body weight")
        case .menstrualCycleDay: return local("Menstrual cycle day")
        case .morningStiffness: return local("Morning stiffness duration")
        case .fatigue: return local("Fatigue severity 0-10")
        case .basdai: return local("BASDAI score")
        case .medicationDose: return local("Medication dose")
        case .flare: return local("Disease flare")
        case .barometricPressure: return local("Barometric pressure")
        case .ambientTemperature: return local("Ambient temperature")
        case .relativeHumidity: return local("Relative humidity")
        case .migraineAttack: return local("Migraine attack pain 0-10")
        case .stress: return local("Stress level 1-5")
        case .hydration: return local("Hydration level 1-5")
        case .caffeine: return local("Caffeinated drinks")
        case .bodyFatPercentage: return loinc("41982-0", "Percentage of body fat Measured")
        case .bmi: return loinc("39156-5", "Body mass index (BMI) [Ratio]")
        case .distanceWalkingRunning: return loinc("55430-3", "Walking distance unspecified time Pedometer")
        case .activeEnergy: return loinc("41981-2", "Calories burned")
        case .exerciseTime: return loinc("55411-3", "Exercise duration")
        case .flightsClimbed: return local("Flights of stairs climbed")
        case .basalEnergy: return local("Basal (resting) energy burned")
        case .workout: return local("Workout duration")
        case .mindfulSession: return local("Mindfulness session duration")
        case .waterIntake: return local("Water intake")
        case .caffeineIntake: return local("Caffeine intake")
        }
    }

    /// A human description for codebooks and documentation.
    public var summary: String {
        switch self {
        case .pain: "Pain intensity, numeric rating scale 0 (none) to 10 (worst)"
        case .morningStiffness: "Duration of morning stiffness"
        case .fatigue: "Fatigue severity, 0 (none) to 10 (worst)"
        case .basdai: "Bath Ankylosing Spondylitis Disease Activity Index, 0 to 10"
        case .heartRate: "Heart rate sample"
        case .restingHeartRate: "Resting heart rate for the day"
        case .hrvSDNN: "Heart rate variability, SDNN"
        case .steps: "Steps counted over the record's period"
        case .sleepDuration: "Sleep duration over the record's period"
        case .spo2: "Peripheral oxygen saturation"
        case .respiratoryRate: "Respiratory rate"
        case .bodyMass: "Body weight"
        case .medicationDose: "A medication dose taken (text = medication name, value = dose)"
        case .flare: "A disease flare episode (value = severity 0 to 10 when given)"
        case .barometricPressure: "Ambient barometric pressure"
        case .ambientTemperature: "Ambient temperature"
        case .relativeHumidity: "Relative humidity"
        case .migraineAttack: "A migraine attack (value = pain 0 to 10, text = triggers separated by ';')"
        case .stress: "Daily check-in: stress, 1 (low) to 5 (high)"
        case .hydration: "Daily check-in: hydration, 1 (poor) to 5 (good)"
        case .caffeine: "Daily check-in: caffeinated drinks (cups)"
        case .menstrualCycleDay: "Day of the menstrual cycle"
        case .bodyFatPercentage: "Body fat percentage"
        case .bmi: "Body mass index"
        case .distanceWalkingRunning: "Distance walked or run over the record's period"
        case .flightsClimbed: "Flights of stairs climbed over the record's period (about 3 m of ascent each)"
        case .activeEnergy: "Active energy burned over the record's period (above resting)"
        case .basalEnergy: "Basal (resting) energy burned over the record's period"
        case .exerciseTime: "Minutes of brisk activity over the record's period"
        case .workout:
            "A workout (value = duration, text = activity type, e.g. running); its distance and energy are separate distance_walking_running and active_energy records"
        case .mindfulSession: "A mindfulness session (value = duration)"
        case .waterIntake: "Water drunk"
        case .caffeineIntake: "Caffeine consumed (measured in mg, unlike the daily check-in's cups)"
        }
    }

    /// For kinds whose text is a controlled vocabulary, the allowed values (lower case).
    package var textVocabulary: Set<String>? {
        switch self {
        case .migraineAttack:
            ["stress", "sleep", "weather", "alcohol", "food", "caffeine", "menstruation", "light", "noise", "screen", "exercise", "dehydration", "other"]
        case .workout: Set(WorkoutActivity.allCases.map(\.rawValue))
        default: nil
        }
    }

    public static func < (lhs: RecordKind, rhs: RecordKind) -> Bool { lhs.rawValue < rhs.rawValue }
}
