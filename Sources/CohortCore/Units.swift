/// UCUM unit handling: which units a kind accepts and how they convert to its canonical unit.
public enum Units {
    /// Converts `value` in `unit` to `kind`'s canonical unit, or returns nil when the unit is not
    /// accepted for that kind. An empty unit means the canonical unit.
    package static func toCanonical(_ value: Double, unit: String, kind: RecordKind) -> Double? {
        let canonical = kind.canonicalUnit
        if unit.isEmpty || unit == canonical { return value }
        guard let convert = conversions[canonical]?[unit], allows(unit, for: kind) else { return nil }
        return convert(value)
    }

    /// The units accepted for `kind`, canonical first.
    package static func accepted(for kind: RecordKind) -> [String] {
        [kind.canonicalUnit] + (conversions[kind.canonicalUnit]?.keys.sorted().filter { allows($0, for: kind) } ?? [])
    }

    /// An annotated unit names what is counted (`{beats}/min`): it fits only the kinds that count that.
    private static func allows(_ unit: String, for kind: RecordKind) -> Bool {
        annotatedFor[unit].map { $0.contains(kind) } ?? true
    }

    /// Annotated units → the only kinds they may be given for.
    private static let annotatedFor: [String: Set<RecordKind>] = [
        "{beats}/min": [.heartRate, .restingHeartRate], "{breaths}/min": [.respiratoryRate],
    ]

    /// canonical unit → (accepted unit → conversion to canonical)
    private static let conversions: [String: [String: @Sendable (Double) -> Double]] = [
        "kg": ["[lb_av]": { $0 * 0.45359237 }, "g": { $0 / 1000 }],
        "Cel": ["[degF]": { ($0 - 32) * 5 / 9 }, "K": { $0 - 273.15 }],
        "hPa": ["kPa": { $0 * 10 }, "mbar": { $0 }, "mm[Hg]": { $0 * 1.333223684 }, "[in_i'Hg]": { $0 * 33.8638866667 }],
        "h": ["min": { $0 / 60 }, "s": { $0 / 3600 }],
        "min": ["h": { $0 * 60 }, "s": { $0 / 60 }],
        "ms": ["s": { $0 * 1000 }],
        "mg": ["g": { $0 * 1000 }, "ug": { $0 / 1000 }],
        "/min": ["{beats}/min": { $0 }, "{breaths}/min": { $0 }],
        "{steps}": ["{count}": { $0 }, "/d": { $0 }],
        "m": ["km": { $0 * 1000 }, "cm": { $0 / 100 }, "[mi_i]": { $0 * 1609.344 }, "[ft_i]": { $0 * 0.3048 }, "[yd_i]": { $0 * 0.9144 }],
        "kcal": ["kJ": { $0 / 4.184 }, "[Cal]": { $0 }, "cal": { $0 / 1000 }],
        "mL": ["L": { $0 * 1000 }, "dL": { $0 * 100 }, "cL": { $0 * 10 }, "[foz_us]": { $0 * 29.5735295625 }],
        "{flights}": ["{count}": { $0 }],
    ]
}
