import CohortCore
import Foundation

/// Reads the Health app's `export.xml` as a stream (see ``XMLStreamParser``) and hands each
/// `Record` and `Workout` to `onSample` as an ``AppleHealthSample`` when its element ends (so the
/// sample carries the metadata entries the protocol keeps), and the `Me` element to `onMe`.
/// Everything else is counted in ``skipped`` by what it is and never kept: metadata values of
/// keys the protocol does not keep (they can be vendor user ids), beat-to-beat HRV lists, workout
/// routes (GPS), workout statistics, activity summaries, clinical records, correlations' wrappers…
///
/// Not `Sendable`: one reader per thread.
package final class AppleHealthReader {
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
    private var keptEntries = 0
    private var refusedValues = 0
    private var beatLists = 0
    private var routes = 0
    /// The metadata keys whose values are kept (`import.apple_health.keep_metadata`).
    private let keepMetadata: Set<String>
    /// The `Record` or `Workout` being read, emitted at its end.
    private var pending: AppleHealthSample?

    /// A reader of the document called `name` in errors; the values of metadata entries whose
    /// key is in `keepMetadata` are kept in the sample's ``AppleHealthSample/metadata``.
    package init(
        name: String, keepMetadata: Set<String> = [], onSample: @escaping (AppleHealthSample) throws -> Void,
        onMe: @escaping (AppleHealthMe) throws -> Void
    ) throws {
        self.name = name
        self.keepMetadata = keepMetadata
        self.onSample = onSample
        self.onMe = onMe
        parser = nil
        parser = try XMLStreamParser(
            name: name, onStart: { [unowned self] element in try self.element(element) },
            onEnd: { [unowned self] name in try self.end(name) })
    }

    /// Parses the next bytes of export.xml.
    package func feed(_ bytes: UnsafeRawBufferPointer) throws { try parser?.feed(bytes) }

    /// Ends the document (a document cut short is an error) and completes ``skipped``.
    public func finish() throws {
        try parser?.finish()
        if metadataEntries > 0 { skipped["MetadataEntry (values dropped)", default: 0] += metadataEntries }
        if keptEntries > 0 { skipped["MetadataEntry (kept by keep_metadata, in the note)", default: 0] += keptEntries }
        if refusedValues > 0 { skipped["MetadataEntry (kept key, value refused)", default: 0] += refusedValues }
        if beatLists > 0 { skipped["HeartRateVariabilityMetadataList (beat-to-beat, dropped)", default: 0] += beatLists }
        if routes > 0 { skipped["WorkoutRoute (GPS, not imported)", default: 0] += routes }
        metadataEntries = 0
        keptEntries = 0
        refusedValues = 0
        beatLists = 0
        routes = 0
    }

    private func element(_ element: XMLElementStart) throws {
        if element.named("Record") {
            try flushPending()
            try record(element)
        } else if element.named("MetadataEntry") {
            metadata(element)
        } else if element.named("InstantaneousBeatsPerMinute") || element.named("HealthData") || element.named("ExportDate")
            || element.named("FileReference") || element.named("SensitivityPoint")
        {
            return
        } else if element.named("HeartRateVariabilityMetadataList") {
            beatLists += 1
        } else if element.named("Workout") {
            try flushPending()
            try workout(element)
        } else if element.named("WorkoutRoute") {
            routes += 1
        } else if element.named("WorkoutStatistics") {
            // Newer exports write a workout's totals as these children (`sum` per type).
            let type = element.value("type").map { String(decoding: $0, as: UTF8.self) } ?? ""
            let line =
                type.contains("Distance") ? Self.workoutDistanceLeftOut
                : type.contains("EnergyBurned") ? Self.workoutEnergyLeftOut : "WorkoutStatistics (not imported)"
            skipped[line, default: 0] += 1
        } else if element.named("Me") {
            try me(element)
        } else {
            skipped[String(decoding: element.name, as: UTF8.self) + " (not imported)", default: 0] += 1
        }
    }

    /// Emits a sample whose element has not ended (only in a document that nests them).
    private func flushPending() throws {
        guard let sample = pending else { return }
        pending = nil
        try onSample(sample)
    }

    /// Emits the pending sample when its `Record` or `Workout` ends.
    private func end(_ name: UnsafeBufferPointer<UInt8>) throws {
        guard let sample = pending, Self.same(name, sample.isWorkout ? "Workout" : "Record") else { return }
        pending = nil
        try onSample(sample)
    }

    private static func same(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard name.utf8CodeUnitCount == bytes.count, let base = bytes.baseAddress else { return false }
        return memcmp(name.utf8Start, base, bytes.count) == 0
    }

    /// A metadata entry: its value is read only when its key is kept and it belongs to a sample.
    private func metadata(_ element: XMLElementStart) {
        guard !keepMetadata.isEmpty, pending != nil, let keyBytes = element.value("key") else {
            metadataEntries += 1
            return
        }
        let written = String(decoding: keyBytes, as: UTF8.self)
        // Older exports spell some keys without `Metadata` (`HKWasUserEntered`); a protocol that
        // keeps one spelling keeps both, under the name it lists.
        guard let key = [written, HealthKitMetadata.otherSpelling(of: written)].compactMap({ $0 }).first(where: keepMetadata.contains) else {
            metadataEntries += 1
            return
        }
        let value = element.value("value").map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard HealthKitMetadata.acceptsValue(value) else {
            refusedValues += 1
            return
        }
        keptEntries += 1
        let entry = key + "=" + value
        let kept = pending?.metadata
        pending?.metadata = kept.map { $0 + "; " + entry } ?? entry
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
        defer { pending = sample }
        guard let kind else {
            sample.outcome = .notCollected
            return
        }
        let minutes = Double(end.epochMilliseconds - start.epochMilliseconds) / 60_000
        switch kind {
        case .sleepDuration:
            let stage = element.value("value").flatMap { AppleHealthMapping.sleepStages[String(decoding: $0, as: UTF8.self)] }
            if let stage {
                sample.text = stage
                sample.value = minutes / 60
            } else {
                sample.outcome = .notCollected  // in bed, awake: not sleep
            }
            return
        case .mindfulSession:
            // A category sample without a value: the session is its period.
            sample.value = minutes
            return
        default:
            break
        }
        guard let valueBytes = element.value("value"), let raw = Self.number(valueBytes), raw.isFinite else {
            sample.outcome = .valueRefused
            return
        }
        let unit = element.value("unit").map { String(decoding: $0, as: UTF8.self) } ?? ""
        guard let value = AppleHealthMapping.canonicalValue(raw, appleUnit: unit, kind: kind) else {
            sample.outcome = .unitRefused
            return
        }
        sample.value = value
    }

    /// A workout: `workout` with its duration in minutes (from `duration`/`durationUnit`, else
    /// its period) and its activity type from HealthKit's fixed list as text. Its distance and
    /// energy are not part of the record: Apple writes them as their own samples too
    /// (DistanceWalkingRunning, ActiveEnergyBurned), which map to their own kinds.
    private func workout(_ element: XMLElementStart) throws {
        let type = element.value("workoutActivityType").map { String(decoding: $0, as: UTF8.self) } ?? "HKWorkout"
        let start = try instant(element, "startDate")
        let end = try instant(element, "endDate")
        guard end >= start else { throw fail(element, "endDate", "the end is before the start") }
        var sample = AppleHealthSample(
            type: type, outcome: .mapped, kind: .workout, start: start, end: end == start ? nil : end, value: nil,
            text: WorkoutActivity(healthKit: type).rawValue, source: source(element), line: element.line)
        sample.isWorkout = true
        defer { pending = sample }
        // The totals are not the record's value (its duration is); Apple writes the same distance
        // and energy as samples over the workout, which are imported as their own kinds, so a
        // total here would count them twice. Left out, and counted with that reason.
        if element.value("totalDistance") != nil { skipped[Self.workoutDistanceLeftOut, default: 0] += 1 }
        if element.value("totalEnergyBurned") != nil { skipped[Self.workoutEnergyLeftOut, default: 0] += 1 }
        if let durationBytes = element.value("duration") {
            guard let raw = Self.number(durationBytes), raw.isFinite else {
                sample.outcome = .valueRefused
                return
            }
            let unit = element.value("durationUnit").map { String(decoding: $0, as: UTF8.self) } ?? "min"
            guard let minutes = AppleHealthMapping.canonicalValue(raw, appleUnit: unit, kind: .workout) else {
                sample.outcome = .unitRefused
                return
            }
            sample.value = minutes
        } else {
            sample.value = Double(end.epochMilliseconds - start.epochMilliseconds) / 60_000
        }
    }

    /// The skipped-list lines of a workout's totals (left out: its distance and energy samples carry them).
    static let workoutDistanceLeftOut = "Workout totalDistance (left out: the workout's distance samples are imported as distance_walking_running)"
    static let workoutEnergyLeftOut = "Workout totalEnergyBurned (left out: the workout's energy samples are imported as active_energy)"

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
