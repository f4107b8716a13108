/// The activity type of a workout (`workout` records' `text`): HealthKit's
/// `HKWorkoutActivityType` cases in snake case (`HKWorkoutActivityTypeTraditionalStrengthTraining`
/// → `traditional_strength_training`). A type this list does not know becomes `other`, so the
/// vocabulary stays fixed and a study's analysis can rely on it.
package enum WorkoutActivity: String, Sendable, Codable, CaseIterable {
    case americanFootball = "american_football"
    case archery
    case australianFootball = "australian_football"
    case badminton
    case baseball
    case basketball
    case bowling
    case boxing
    case climbing
    case cricket
    case crossTraining = "cross_training"
    case curling
    case cycling
    case dance
    case danceInspiredTraining = "dance_inspired_training"
    case elliptical
    case equestrianSports = "equestrian_sports"
    case fencing
    case fishing
    case functionalStrengthTraining = "functional_strength_training"
    case golf
    case gymnastics
    case handball
    case hiking
    case hockey
    case hunting
    case lacrosse
    case martialArts = "martial_arts"
    case mindAndBody = "mind_and_body"
    case mixedMetabolicCardioTraining = "mixed_metabolic_cardio_training"
    case paddleSports = "paddle_sports"
    case play
    case preparationAndRecovery = "preparation_and_recovery"
    case racquetball
    case rowing
    case rugby
    case running
    case sailing
    case skatingSports = "skating_sports"
    case snowSports = "snow_sports"
    case soccer
    case softball
    case squash
    case stairClimbing = "stair_climbing"
    case surfingSports = "surfing_sports"
    case swimming
    case tableTennis = "table_tennis"
    case tennis
    case trackAndField = "track_and_field"
    case traditionalStrengthTraining = "traditional_strength_training"
    case volleyball
    case walking
    case waterFitness = "water_fitness"
    case waterPolo = "water_polo"
    case waterSports = "water_sports"
    case wrestling
    case yoga
    case barre
    case coreTraining = "core_training"
    case crossCountrySkiing = "cross_country_skiing"
    case downhillSkiing = "downhill_skiing"
    case flexibility
    case highIntensityIntervalTraining = "high_intensity_interval_training"
    case jumpRope = "jump_rope"
    case kickboxing
    case pilates
    case snowboarding
    case stairs
    case stepTraining = "step_training"
    case wheelchairWalkPace = "wheelchair_walk_pace"
    case wheelchairRunPace = "wheelchair_run_pace"
    case taiChi = "tai_chi"
    case mixedCardio = "mixed_cardio"
    case handCycling = "hand_cycling"
    case discSports = "disc_sports"
    case fitnessGaming = "fitness_gaming"
    case cardioDance = "cardio_dance"
    case socialDance = "social_dance"
    case pickleball
    case cooldown
    case swimBikeRun = "swim_bike_run"
    case transition
    case underwaterDiving = "underwater_diving"
    case other

    /// The activity for a HealthKit name with or without its prefix
    /// (`HKWorkoutActivityTypeRunning`, `Running`); `other` when HealthKit's name is not known.
    package init(healthKit name: String) {
        let bare = name.hasPrefix(Self.prefix) ? String(name.dropFirst(Self.prefix.count)) : name
        self = Self.byHealthKitName[bare] ?? .other
    }

    /// The HealthKit name without its prefix (`TraditionalStrengthTraining`).
    package var healthKitName: String {
        rawValue.split(separator: "_").map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    static let prefix = "HKWorkoutActivityType"
    private static let byHealthKitName: [String: WorkoutActivity] = Dictionary(uniqueKeysWithValues: allCases.map { ($0.healthKitName, $0) })
}
