import CohortCore
import Foundation

/// Writes a record's Observation straight from the ``DeidentifiedRecord`` into a reused byte
/// buffer: the bytes ``FHIRMapper/resource(_:ordinal:subject:ids:)`` and
/// ``FHIR/Observation/write(to:)`` give (a test compares the two on generated records), without
/// building the model, its Strings and arrays per record.
///
/// An Observation's members in sorted key order are `category`, `code` (constant per kind), then
/// the record's `component`, `dataAbsentReason`, `device`, `effective…`, `id`, `note`, then
/// `resourceType`, `status`, `subject` (constant per participant) and `text` (per kind), then the
/// value. Every constant run is JSON written once per kind with ``FHIRJSON`` from the same
/// ``FHIRMapper/KindParts`` the model takes, so it is the model's JSON by construction.
///
/// Daily totals (``FHIRMapper/dailyTotal(_:ordinal:subject:ids:)``) are written the same way
/// with their own `code`; medication doses (MedicationStatement) keep the model path.
struct ObservationBytes {
    /// What an Observation takes from its kind alone, as JSON fragments.
    struct Kind {
        /// `{"category":[…],"code":{…}` — every member after it starts with a comma.
        let head: [UInt8]
        /// `},"text":{…}` — closes `subject` and writes the narrative.
        let narrative: [UInt8]
        /// `,"valueQuantity":{"code":…,"system":…,"unit":…,"value":` — the number and `}` follow.
        let quantity: [UInt8]
        /// The kind's id part (`kind.rawValue`).
        let idPart: [UInt8]
        /// Whether these are a daily total's fragments: its Observation has only the category,
        /// code, effective period, id, subject, narrative and quantity.
        let dailyTotal: Bool

        init(_ parts: FHIRMapper.KindParts, kind: RecordKind, dailyTotal: Bool) {
            self.dailyTotal = dailyTotal
            head = FHIRJSON.fragment(open: true) { json in
                json.member("category", parts.category)
                json.member("code", dailyTotal ? FHIRMapper.dailyTotalCode(kind) : parts.code)
            }
            narrative = Array("}".utf8) + FHIRJSON.fragment { json in json.member("text", parts.narrative) }
            var quantity = FHIRJSON.fragment { json in
                json.member("valueQuantity", FHIR.Quantity(numberText: "0", unit: parts.unitDisplay, system: FHIR.ucum, code: parts.unit))
            }
            // The quantity's JSON ends with `"value":0}`: keep up to the colon.
            quantity.removeLast(2)
            self.quantity = quantity
            idPart = Array(kind.rawValue.utf8)
        }
    }

    /// Per kind, its records' fragments; nil for medication doses (not an Observation).
    static let kinds = kinds(dailyTotal: false)
    /// Per kind, its daily totals' fragments.
    static let dailyTotals = kinds(dailyTotal: true)

    private static func kinds(dailyTotal: Bool) -> [RecordKind: Kind] {
        Dictionary(
            uniqueKeysWithValues: RecordKind.allCases.compactMap { kind in
                guard kind != .medicationDose, let parts = FHIRMapper.kindParts[kind] else { return nil }
                return (kind, Kind(parts, kind: kind, dailyTotal: dailyTotal))
            })
    }

    /// `,"dataAbsentReason":{masked}`.
    private static let masked = FHIRJSON.fragment { json in json.member("dataAbsentReason", FHIRMapper.masked) }
    /// `{"code":{…},"valueString":` of a workout's activity component and of a migraine trigger's.
    private static let workoutComponent = componentHead(FHIRMapper.workoutActivity)
    private static let triggerComponent = componentHead(FHIRMapper.migraineTrigger)
    /// The members from `resourceType` to the subject's `reference` key.
    private static let beforeSubject = FHIRJSON.fragment { json in
        json.member("resourceType", "Observation")
        json.member("status", "final")
        json.key("subject")
    } + Array("{\"reference\":".utf8)

    private static func componentHead(_ code: FHIR.CodeableConcept) -> [UInt8] {
        FHIRJSON.fragment(open: true) { json in json.member("code", code) } + Array(",\"valueString\":".utf8)
    }

    /// The id's first parts for the current participant: `Observation`, the study id and the
    /// pseudonym, joined by ``ResourceID/Parts``.
    private var idPrefix: [UInt8] = []
    /// Reused per record: the value's number text, written before the members that precede it,
    /// and the id's parts.
    private var number: [UInt8] = []
    private var idParts = ResourceID.Parts()

    init() {
        number.reserveCapacity(32)
    }

    /// Starts a participant's records.
    mutating func begin(studyID: String, pseudonym: String) {
        var prefix = ResourceID.Parts()
        prefix.append("Observation")
        prefix.append(studyID)
        prefix.append(pseudonym)
        idPrefix = Array(prefix.bytes.dropFirst(ResourceID.namespace.count))
    }

    /// Where a written Observation's id text and subject reference (a JSON string, quotes
    /// included) are in the buffer.
    struct Written {
        let id: Range<Int>
        let subject: Range<Int>
    }

    /// Appends the Observation of `r` (its participant's `ordinal`-th record resource) to `out`,
    /// with subject `subject` (a JSON string, quotes included); `ids` builds its id.
    mutating func write(
        _ r: DeidentifiedRecord, kind: Kind, ordinal: Int, subject: [UInt8], ids: ResourceID.Builder, to out: inout [UInt8]
    ) -> Written {
        number.removeAll(keepingCapacity: true)
        if let value = r.value { Self.appendNumber(value, to: &number) }
        // FHIR strings must not be empty: an empty label, source or note is the same as none.
        let record = !kind.dailyTotal
        let label = record ? r.valueLabel.flatMap { $0.isEmpty ? nil : $0 } : nil
        out.append(contentsOf: kind.head)
        if record { Self.appendComponents(r, to: &out) }
        if record, number.isEmpty, label == nil, r.kind.requiresValue { out.append(contentsOf: Self.masked) }
        if record, let source = r.source, !source.isEmpty {
            Self.append(",\"device\":{\"display\":", to: &out)
            JSONText.appendString(source, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        let id = appendIDs(r, kind: kind, ordinal: ordinal, ids: ids, to: &out)
        if record, let note = r.note, !note.isEmpty {
            Self.append(",\"note\":[{\"text\":", to: &out)
            JSONText.appendString(note, to: &out)
            Self.append("}]", to: &out)
        }
        out.append(contentsOf: Self.beforeSubject)
        let reference = out.count..<(out.count + subject.count)
        out.append(contentsOf: subject)
        out.append(contentsOf: kind.narrative)
        if !number.isEmpty {
            out.append(contentsOf: kind.quantity)
            out.append(contentsOf: number)
            out.append(UInt8(ascii: "}"))
        } else if let label {
            Self.append(",\"valueString\":", to: &out)
            JSONText.appendString(label, to: &out)
        }
        out.append(UInt8(ascii: "}"))
        return Written(id: id, subject: reference)
    }

    /// Appends `effectiveDateTime` or `effectivePeriod`, then `id`: the id hashes the instants'
    /// text as just written. Returns where the id's text is.
    private mutating func appendIDs(_ r: DeidentifiedRecord, kind: Kind, ordinal: Int, ids: ResourceID.Builder, to out: inout [UInt8]) -> Range<Int> {
        var start = 0..<0, end = 0..<0
        if let endInstant = r.end {
            Self.append(",\"effectivePeriod\":{\"end\":", to: &out)
            end = Self.appendInstant(endInstant, to: &out)
            if let startInstant = r.start {
                Self.append(",\"start\":", to: &out)
                start = Self.appendInstant(startInstant, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        } else if let startInstant = r.start {
            Self.append(",\"effectiveDateTime\":", to: &out)
            start = Self.appendInstant(startInstant, to: &out)
        }
        idParts.append(joined: idPrefix)
        idParts.append(joined: kind.idPart)
        out.withUnsafeBufferPointer { bytes in
            idParts.append(joined: UnsafeBufferPointer(rebasing: bytes[start]))
            idParts.append(joined: UnsafeBufferPointer(rebasing: bytes[end]))
        }
        idParts.append(ordinal)
        Self.append(",\"id\":\"", to: &out)
        let idStart = out.count
        ids.make(&idParts, into: &out)
        let id = idStart..<out.count
        out.append(UInt8(ascii: "\""))
        return id
    }

    /// Appends `instant` as a JSON string; returns where its text (without quotes) is.
    private static func appendInstant(_ instant: Timestamp, to out: inout [UInt8]) -> Range<Int> {
        out.append(UInt8(ascii: "\""))
        let start = out.count
        ByteText.appendTimestamp(instant, to: &out)
        let text = start..<out.count
        out.append(UInt8(ascii: "\""))
        return text
    }

    /// A workout's activity component, or a migraine attack's trigger components.
    private static func appendComponents(_ r: DeidentifiedRecord, to out: inout [UInt8]) {
        guard r.kind == .workout || r.kind == .migraineAttack, let text = r.text, !text.isEmpty else { return }
        if r.kind == .workout {
            append(",\"component\":[", to: &out)
            out.append(contentsOf: workoutComponent)
            JSONText.appendString(text, to: &out)
            append("}]", to: &out)
            return
        }
        let triggers = FHIRMapper.migraineTriggers(text)
        guard !triggers.isEmpty else { return }
        append(",\"component\":[", to: &out)
        for (index, trigger) in triggers.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: triggerComponent)
            JSONText.appendString(trigger, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Appends `FHIR.numberText(value)` (nothing when nil); a whole number's digits directly.
    static func appendNumber(_ value: Double, to bytes: inout [UInt8]) {
        if value.isFinite, value == value.rounded(), abs(value) < 1e15 {
            ByteText.appendInt(Int(value), to: &bytes)
        } else if let text = FHIR.numberText(value) {
            bytes.append(contentsOf: text.utf8)
        }
    }

    @inline(__always)
    private static func append(_ text: StaticString, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}
