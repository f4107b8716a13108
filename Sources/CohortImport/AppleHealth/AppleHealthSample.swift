package import CohortCore

/// One sample of the Health app's export, mapped as far as the export alone allows; whether it is
/// stored (protocol, study period, consent, duplicates) is decided by the importer.
package struct AppleHealthSample: Sendable {
    /// What the mapping decided.
    public enum Outcome: String, Sendable, Codable {
        /// Mapped to `kind` with a value in its canonical unit: a candidate for storing.
        case mapped
        /// No cohort record kind for this type (or sleep stage): counted as not collected.
        case notCollected = "not_collected"
        /// The sample's unit is not one cohort converts for the kind.
        case unitRefused = "unit_refused"
        /// The value is missing or not a number.
        case valueRefused = "value_refused"
    }

    /// The HealthKit type (`HKQuantityTypeIdentifierHeartRate`) or, for a workout, its activity type.
    public var type: String
    public var outcome: Outcome
    public var kind: RecordKind?
    public var start: Timestamp
    /// The end, nil when it equals the start (a point sample).
    public var end: Timestamp?
    /// In `kind`'s canonical unit.
    public var value: Double?
    /// The sleep stage for sleep samples, the activity type (``WorkoutActivity``) for workouts.
    public var text: String?
    /// The device's product type (see ``DeviceSource``).
    public var source: String
    /// The line of export.xml the sample starts on.
    public var line: Int
    /// The values of the metadata keys the protocol keeps, as `key=value` entries separated by
    /// `; ` in the order the export lists them; nil when none was kept.
    public var metadata: String? = nil
    /// Whether the sample is a `Workout` element (its end is a `Workout` end).
    var isWorkout = false
}

/// What the Health app's `Me` element says (checked against the roster, never stored).
package struct AppleHealthMe: Sendable, Equatable {
    public var birthDate: CivilDate?
    /// nil when the export says "not set".
    public var sex: Sex?
}
