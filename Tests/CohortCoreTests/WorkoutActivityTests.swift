import Testing

@testable import CohortCore

/// The fixed vocabulary of workout activity types (the `workout` kind's text).
struct WorkoutActivityTests {
    @Test(arguments: [
        ("HKWorkoutActivityTypeRunning", "running"), ("HKWorkoutActivityTypeTraditionalStrengthTraining", "traditional_strength_training"),
        ("HKWorkoutActivityTypeHighIntensityIntervalTraining", "high_intensity_interval_training"), ("HKWorkoutActivityTypeTaiChi", "tai_chi"),
        ("Yoga", "yoga"), ("HKWorkoutActivityTypeOther", "other"), ("HKWorkoutActivityTypeQuidditch", "other"), ("", "other"),
    ])
    func healthKitNamesMapToTheVocabulary(name: String, expected: String) {
        #expect(WorkoutActivity(healthKit: name).rawValue == expected)
    }

    @Test func everyActivityRoundTripsThroughItsHealthKitName() {
        for activity in WorkoutActivity.allCases {
            #expect(WorkoutActivity(healthKit: "HKWorkoutActivityType" + activity.healthKitName) == activity)
        }
        #expect(RecordKind.workout.textVocabulary == Set(WorkoutActivity.allCases.map(\.rawValue)))
    }
}
