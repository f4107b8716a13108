import CohortCore
import Foundation

/// Reads the Health app's `export.xml` as a stream (see ``XMLStreamParser``) and hands each
/// `Record` and `Workout` to `onSample` as an ``AppleHealthSample``, and the `Me` element to
/// `onMe`. Everything else is counted in ``skipped`` by what it is and never kept: metadata
/// entries (their values can be vendor user ids), beat-to-beat HRV lists, workout routes (GPS),
/// activity summaries, clinical records, correlations' wrappers…
///
/// Not `Sendable`: one reader per thread.
public final class AppleHealthReader {
    /// Elements not imported, by what they are (e.g. `MetadataEntry (values dropped)`: 12).
    public private(set) var skipped: [String: Int] = [:]
    private var parser: XMLStreamParser?
    private let name: String
    private let onSample: (AppleHealthSample) throws -> Void
    private let onMe: (AppleHealthMe) throws -> Void
    // Caches: exports come grouped by type, and sources repeat.
    private var lastTypeBytes: [UInt8] = []
    private var lastType = ""
    private var lastKind: RecordKind?
    private var sourceCache: [[UInt8]: String] = [:]
    private var metadataEntries = 0
    private var beatLists = 0
    private var routes = 0

    /// A reader of the document called `name` in errors.
    public init(name: String, onSample: @escaping (AppleHealthSample) throws -> Void, onMe: @escaping (AppleHealthMe) throws -> Void) throws {
        self.name = name
        self.onSample = onSample
        self.onMe = onMe
        parser = nil
        parser = try XMLStreamParser(name: name) { [unowned self] element in try self.element(element) }
    }

    /// Parses the next bytes of export.xml.
    package func feed(_ bytes: UnsafeRawBufferPointer) throws { try parser?.feed(bytes) }

    /// Ends the document (a document cut short is an error) and completes ``skipped``.
    public func finish() throws {
        try parser?.finish()
        if metadataEntries > 0 { skipped["MetadataEntry (values dropped)", default: 0] += metadataEntries }
        if beatLists > 0 { skipped["HeartRateVariabilityMetadataList (beat-to-beat, dropped)", default: 0] += beatLists }
        if routes > 0 { skipped["WorkoutRoute (GPS, not imported)", default: 0] += routes }
        metadataEntries = 0
        beatLists = 0
        routes = 0
    }

    private func element(_ element: XMLElementStart) throws {
        if element.named("Record") {
            try record(element)
        } else if element.named("MetadataEntry") {
            metadataEntries += 1
        } else if element.named("InstantaneousBeatsPerMinute") || element.named("HealthData") || element.named("ExportDate")
            || element.named("FileReference") || element.named("SensitivityPoint")
        {
            return
        } else if element.named("HeartRateVariabilityMetadataList") {
            beatLists += 1
        } else if element.named("Workout") {
            try workout(element)
        } else if element.named("WorkoutRoute") {
            routes += 1
        } else if element.named("Me") {
            try me(element)
        } else {
            skipped[String(decoding: element.name, as: UTF8.self) + " (not imported)", default: 0] += 1
        }
    }

    private func fail(_ element: XMLElementStart, _ field: String, _ message: String) -> CohortError {
        CohortError.invalid(message, file: name, line: element.line, field: field, hint: "the export is damaged: export it again from the Health app")
    }

    private func instant(_ element: XMLElementStart, _ key: StaticString) throws -> Timestamp {
        guard let bytes = element.value(key) else { throw fail(element, "\(key)", "the attribute is missing") }
        guard let t = AppleHealthTimestamp.parse(bytes) else {
            throw fail(element, "\(key)", "expected an instant such as 2024-03-14 08:30:00 +0100")
        }
        return t
    }

    private func type(_ bytes: UnsafeBufferPointer<UInt8>) -> (String, RecordKind?) {
        if lastTypeBytes.elementsEqual(bytes) {
            return (lastType, lastKind)
        }
        lastTypeBytes = Array(bytes)
        lastType = String(decoding: bytes, as: UTF8.self)
        lastKind = AppleHealthMapping.kinds[lastType]
        return (lastType, lastKind)
    }

    private func source(_ element: XMLElementStart) -> String {
        let sourceName = element.value("sourceName")
        let device = element.value("device")
        // The key: the source name and the device description after its (varying) object address.
        var key: [UInt8] = []
        if let sourceName { key.append(contentsOf: sourceName) }
        key.append(0)
        if let device {
            let afterAddress = device.firstIndex(of: 0x3E).map { device[$0...] } ?? device[...]
            key.append(contentsOf: afterAddress)
        }
        if let cached = sourceCache[key] { return cached }
        let sanitized = DeviceSource.sanitized(
            device: device.map { String(decoding: $0, as: UTF8.self) }, sourceName: sourceName.map { String(decoding: $0, as: UTF8.self) })
        if sourceCache.count < 10_000 { sourceCache[key] = sanitized }
        return sanitized
    }

    private func record(_ element: XMLElementStart) throws {
        guard let typeBytes = element.value("type") else { throw fail(element, "type", "the attribute is missing") }
        let (type, kind) = type(typeBytes)
        let start = try instant(element, "startDate")
        let end = try instant(element, "endDate")
        guard end >= start else { throw fail(element, "endDate", "the end is before the start") }
        var sample = AppleHealthSample(
            type: type, outcome: .mapped, kind: kind, start: start, end: end == start ? nil : end, value: nil, text: nil, source: source(element),
            line: element.line)
        guard let kind else {
            sample.outcome = .notCollected
            return try onSample(sample)
        }
        if kind == .sleepDuration {
            let stage = element.value("value").flatMap { AppleHealthMapping.sleepStages[String(decoding: $0, as: UTF8.self)] }
            if let stage {
                sample.text = stage
                sample.value = Double(end.epochMilliseconds - start.epochMilliseconds) / 3_600_000
            } else {
                sample.outcome = .notCollected  // in bed, awake: not sleep
            }
            return try onSample(sample)
        }
        guard let valueBytes = element.value("value"), let raw = Self.number(valueBytes), raw.isFinite else {
            sample.outcome = .valueRefused
            return try onSample(sample)
        }
        let unit = element.value("unit").map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard let value = AppleHealthMapping.canonicalValue(raw, appleUnit: unit, kind: kind) else {
            sample.outcome = .unitRefused
            return try onSample(sample)
        }
        sample.value = value
        try onSample(sample)
    }

    private func workout(_ element: XMLElementStart) throws {
        // Workouts have no cohort record kind: counted by activity type as not collected.
        let type = element.value("workoutActivityType").map { String(decoding: $0, as: UTF8.self) } ?? "HKWorkout"
        let start = try instant(element, "startDate")
        let end = try instant(element, "endDate")
        try onSample(AppleHealthSample(type: type, outcome: .notCollected, kind: nil, start: start, end: end, value: nil, text: nil, source: "", line: element.line))
    }

    private func me(_ element: XMLElementStart) throws {
        let birth = element.value("HKCharacteristicTypeIdentifierDateOfBirth").map { String(decoding: $0, as: UTF8.self) } ?? ""
        let sexText = element.value("HKCharacteristicTypeIdentifierBiologicalSex").map { String(decoding: $0, as: UTF8.self) } ?? ""
        let sex: Sex? =
            switch sexText {
            case "HKBiologicalSexFemale": .female
            case "HKBiologicalSexMale": .male
            case "HKBiologicalSexOther": .other
            default: nil
            }
        var birthDate: CivilDate?
        if !birth.isEmpty {
            guard let date = CivilDate(iso: birth) else {
                throw fail(element, "HKCharacteristicTypeIdentifierDateOfBirth", "expected a date such as 1980-05-01")
            }
            birthDate = date
        }
        try onMe(AppleHealthMe(birthDate: birthDate, sex: sex))
    }

    /// A decimal number (`72`, `0.97`, `-3.5`, `1e3`); nil when the bytes are not one.
    static func number(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var mantissa: Int64 = 0
        var digits = 0
        var fraction = 0
        var seenPoint = false
        var i = 0
        let negative = bytes.first == 0x2D
        if negative { i = 1 }
        while i < bytes.count {
            let c = bytes[i]
            if c >= 0x30, c <= 0x39 {
                mantissa = mantissa &* 10 &+ Int64(c - 0x30)
                digits += 1
                if seenPoint { fraction += 1 }
            } else if c == 0x2E, !seenPoint {
                seenPoint = true
            } else {
                return Double(String(decoding: bytes, as: UTF8.self))
            }
            i += 1
        }
        guard digits > 0 else { return nil }
        guard digits <= 15 else { return Double(String(decoding: bytes, as: UTF8.self)) }
        var value = Double(mantissa)
        if fraction > 0 { value /= powers[fraction] }
        return negative ? -value : value
    }

    private static let powers: [Double] = (0...15).map { (0..<$0).reduce(1.0) { r, _ in r * 10 } }
}
