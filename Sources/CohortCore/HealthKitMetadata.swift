/// Which of the Health app's `MetadataEntry` keys a protocol may keep
/// (`import.apple_health.keep_metadata`). Metadata values are dropped on import unless kept, and
/// only keys on ``keepable`` can be kept: each describes how a sample was measured (motion
/// context, sensor location, entered by hand, indoors) with a value from a small fixed set or a
/// number — never who the participant is. Keys that carry identifiers (vendor user ids, sync and
/// external ids, serial numbers, device names, time zones) are refused at protocol load, and so
/// is any key not on the list, since a key cohort does not know may hold anything.
package enum HealthKitMetadata {
    /// Keys a protocol may keep, as the Health app writes them (older exports write some without
    /// the `Metadata` part, e.g. `HKIndoorWorkout`).
    package static let keepable: Set<String> = [
        "HKMetadataKeyHeartRateMotionContext", "HKMetadataKeyHeartRateSensorLocation", "HKMetadataKeyWasUserEntered", "HKWasUserEntered",
        "HKMetadataKeyIndoorWorkout", "HKIndoorWorkout", "HKMetadataKeyAverageMETs", "HKAverageMETs", "HKMetadataKeyElevationAscended",
        "HKElevationAscended", "HKMetadataKeyElevationDescended", "HKElevationDescended", "HKMetadataKeyWeatherTemperature", "HKWeatherTemperature",
        "HKMetadataKeyWeatherHumidity", "HKWeatherHumidity", "HKMetadataKeyWeatherCondition", "HKMetadataKeyBodyTemperatureSensorLocation",
        "HKMetadataKeyBloodGlucoseMealTime", "HKMetadataKeyVO2MaxTestType", "HKMetadataKeyWasTakenInLab", "HKMetadataKeyMenstrualCycleStart",
        "HKMetadataKeySwimmingLocationType", "HKMetadataKeySwimmingStrokeStyle", "HKMetadataKeyLapLength", "HKMetadataKeyAverageSpeed",
        "HKMetadataKeyMaximumSpeed", "HKMetadataKeyAlpineSlopeGrade", "HKMetadataKeyCoachedWorkout", "HKMetadataKeyGroupFitness",
        "HKMetadataKeyPhysicalEffortEstimationType", "HKMetadataKeySessionEstimate", "HKMetadataKeyAppleDeviceCalibrated",
        "HKMetadataKeyHeartRateRecoveryActivityType", "HKMetadataKeyAudioExposureLevel", "HKMetadataKeyQuantityClampedToLowerBound",
        "HKMetadataKeyQuantityClampedToUpperBound", "HKMetadataKeyWaterSalinity",
    ]

    /// Keys known to carry identifiers or free text (refused with that reason).
    package static let identifying: Set<String> = [
        "HKMetadataKeyExternalUUID", "HKExternalUUID", "HKMetadataKeySyncIdentifier", "HKMetadataKeySyncVersion",
        "HKMetadataKeyDeviceSerialNumber", "HKMetadataKeyDeviceName", "HKMetadataKeyDeviceManufacturerName",
        "HKMetadataKeyUDIDeviceIdentifier", "HKMetadataKeyUDIProductionIdentifier", "HKMetadataKeyDigitalSignature",
        "HKMetadataKeyTimeZone", "HKTimeZone", "HKMetadataKeyFoodType", "HKMetadataKeyWorkoutBrandName",
        "HKMetadataKeyAppleFitnessPlusSession", "HKMetadataKeyUserMotionContext",
    ]

    /// The other spelling of a keepable key: `HKWasUserEntered` for `HKMetadataKeyWasUserEntered`
    /// and back (older exports write keys without `Metadata`), nil when that spelling is not
    /// keepable.
    package static func otherSpelling(of key: String) -> String? {
        let modern = "HKMetadataKey", old = "HK"
        let other: String
        if key.hasPrefix(modern) {
            other = old + key.dropFirst(modern.count)
        } else if key.hasPrefix(old) {
            other = modern + key.dropFirst(old.count)
        } else {
            return nil
        }
        return keepable.contains(other) && keepable.contains(key) ? other : nil
    }

    /// Why `key` cannot be kept, nil when it can.
    package static func refusal(_ key: String) -> String? {
        if keepable.contains(key) { return nil }
        let lower = key.lowercased()
        if identifying.contains(key) || ["user", "identifier", "uuid", "serial", "name", "email", "account", "sync", "zone"].contains(where: lower.contains) {
            return "this metadata key may identify the participant (ids, serial numbers, names, time zones), so it is never kept"
        }
        return "this metadata key is not one cohort knows to be non-identifying, so it cannot be kept"
    }

    /// Whether a kept key's value is stored: at most 64 characters, no control characters, and
    /// neither `;` nor `=` (they separate kept entries in the record's note).
    package static func acceptsValue(_ value: String) -> Bool {
        value.utf8.count <= 64 && !value.isEmpty && !value.unicodeScalars.contains { $0.value < 0x20 || $0 == ";" || $0 == "=" || $0.value == 0x7F }
    }
}
