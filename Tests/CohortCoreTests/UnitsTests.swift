import Testing

@testable import CohortCore

struct UnitsTests {
    @Test(arguments: [
        (RecordKind.bodyMass, "[lb_av]", 150.0, 68.0388555),
        (.bodyMass, "g", 72_500, 72.5),
        (.bodyMass, "kg", 72.5, 72.5),
        (.bodyMass, "", 72.5, 72.5),
        (.ambientTemperature, "[degF]", 98.6, 37.0),
        (.ambientTemperature, "[degF]", -40, -40),
        (.ambientTemperature, "K", 273.15, 0),
        (.sleepDuration, "min", 450, 7.5),
        (.sleepDuration, "s", 27_000, 7.5),
        (.morningStiffness, "h", 1.5, 90),
        (.hrvSDNN, "s", 0.042, 42),
        (.barometricPressure, "kPa", 101.325, 1013.25),
        (.barometricPressure, "mm[Hg]", 760, 1013.25),
        (.medicationDose, "g", 1, 1000),
        (.heartRate, "{beats}/min", 61, 61),
        (.steps, "/d", 8000, 8000),
        (.distanceWalkingRunning, "km", 5.2, 5200),
        (.distanceWalkingRunning, "[mi_i]", 3.1, 4988.9664),
        (.distanceWalkingRunning, "[ft_i]", 100, 30.48),
        (.activeEnergy, "kJ", 1046, 250),
        (.activeEnergy, "[Cal]", 250, 250),
        (.basalEnergy, "cal", 1_500_000, 1500),
        (.exerciseTime, "h", 0.75, 45),
        (.workout, "s", 1830, 30.5),
        (.waterIntake, "L", 1.5, 1500),
        (.waterIntake, "[foz_us]", 16.9, 499.7926),
        (.caffeineIntake, "g", 0.2, 200),
        (.flightsClimbed, "{count}", 4, 4),
    ])
    func convertsToTheCanonicalUnit(kind: RecordKind, unit: String, value: Double, expected: Double) throws {
        let converted = try #require(Units.toCanonical(value, unit: unit, kind: kind))
        #expect(abs(converted - expected) < 1e-3, "\(converted)")
    }

    @Test(arguments: [
        (RecordKind.bodyMass, "lbs"), (.bodyMass, "[degF]"), (.ambientTemperature, "kg"), (.heartRate, "bpm"), (.heartRate, "Cel"),
        (.pain, "%"), (.spo2, "{score}"), (.steps, "KG"), (.distanceWalkingRunning, "{steps}"), (.waterIntake, "mg"), (.caffeineIntake, "mL"),
        (.bmi, "%"), (.bodyFatPercentage, "kg"), (.activeEnergy, "min"),
    ])
    func unknownOrWrongUnitIsRejected(kind: RecordKind, unit: String) {
        #expect(Units.toCanonical(1, unit: unit, kind: kind) == nil)
    }

    @Test(arguments: RecordKind.allCases)
    func everyAcceptedUnitConverts(kind: RecordKind) {
        let accepted = Units.accepted(for: kind)
        #expect(accepted.first == kind.canonicalUnit)
        #expect(Set(accepted).count == accepted.count)
        for unit in accepted { #expect(Units.toCanonical(1, unit: unit, kind: kind) != nil, "\(unit)") }
        #expect(Units.toCanonical(12.5, unit: kind.canonicalUnit, kind: kind) == 12.5)
    }
}

struct UnitAnnotationTests {
    /// A unit that names what it counts fits only the kinds that count that: a heart rate in breaths per minute is refused.
    @Test(arguments: [
        (RecordKind.heartRate, "{breaths}/min", false), (.restingHeartRate, "{breaths}/min", false), (.respiratoryRate, "{beats}/min", false),
        (.heartRate, "{beats}/min", true), (.restingHeartRate, "{beats}/min", true), (.respiratoryRate, "{breaths}/min", true),
        (.heartRate, "/min", true),
    ])
    func annotatedUnitsFitTheirKind(kind: RecordKind, unit: String, accepted: Bool) {
        #expect((Units.toCanonical(60, unit: unit, kind: kind) != nil) == accepted)
        #expect(Units.accepted(for: kind).contains(unit) == accepted)
    }
}
