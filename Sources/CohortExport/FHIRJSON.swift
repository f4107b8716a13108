/// Compact JSON with sorted keys written straight into bytes, for the resources an export
/// writes once per record (Observation, MedicationStatement). It produces exactly the bytes
/// `JSONEncoder` gives with `[.sortedKeys, .withoutEscapingSlashes]` (a test pins that), at a
/// fraction of the cost: no boxing, no key sorting, no intermediate values.
///
/// Callers emit an object's members in sorted key order, skipping nil values, as the synthesized
/// `Encodable` conformances do with `encodeIfPresent`.
struct FHIRJSON {
    private(set) var bytes: [UInt8] = []
    /// Whether the object or array being written already has a member.
    private var hasMember: [Bool] = []
    /// Where each `Reference.reference` value was written: the bytes of its JSON string,
    /// quotes included, so a writer can rewrite references without searching the output.
    private(set) var referenceValues: [Range<Int>] = []
    /// The slot under which the kind-constant members of the next resource are memoized (the
    /// writer sets the record kind's ``FHIRMapper/KindParts/slot``); nil: nothing is memoized.
    var memoSlot: Int?
    /// Per slot, the last value of each memoized member and the JSON written for it.
    private var memos = Memos()

    struct Memos {
        var category: [(value: [FHIR.CodeableConcept], json: [UInt8])?] = []
        var code: [(value: FHIR.CodeableConcept, json: [UInt8])?] = []
        var text: [(value: FHIR.Narrative, json: [UInt8])?] = []
    }

    init(capacity: Int = 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its capacity, to write the next value.
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        hasMember.removeAll(keepingCapacity: true)
        referenceValues.removeAll(keepingCapacity: true)
    }

    /// The JSON of members written by `body` as a part of a larger object: after the opening
    /// `{` when `open` (the first member takes no comma), else as members following others (each
    /// starting with a comma). Builds the constant runs ``ObservationBytes`` copies per record.
    static func fragment(open: Bool = false, _ body: (inout FHIRJSON) -> Void) -> [UInt8] {
        var json = FHIRJSON(capacity: 256)
        json.beginObject()
        if !open { json.hasMember[0] = true }
        body(&json)
        return open ? json.bytes : Array(json.bytes.dropFirst())
    }

    mutating func beginObject() {
        bytes.append(UInt8(ascii: "{"))
        hasMember.append(false)
    }

    mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        hasMember.removeLast()
    }

    mutating func beginArray() {
        bytes.append(UInt8(ascii: "["))
        hasMember.append(false)
    }

    mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        hasMember.removeLast()
    }

    /// Starts `"name":` in the current object.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Starts the next element of the current array.
    mutating func element() { separate() }

    mutating func member(_ name: StaticString, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    /// A JSON number from text that already is a valid JSON number.
    mutating func member(_ name: StaticString, number text: String?) {
        guard let text else { return }
        key(name)
        bytes.append(contentsOf: text.utf8)
    }

    mutating func string(_ text: String) {
        JSONText.appendString(text, to: &bytes)
    }

    /// `member(name, value)` for a kind-constant member: when the value equals the one last
    /// written under the same ``memoSlot``, its JSON is copied rather than written again. That
    /// JSON is a function of the value alone — an object or array opens its own member state,
    /// and these types hold no reference (``referenceValues`` is untouched) — so the bytes are
    /// the same either way. The memo is moved out of ``memos`` while the value is written (no
    /// copy of it, and no overlapping access to `self`).
    private mutating func memoized<V: Equatable>(
        _ name: StaticString, _ value: V?, in path: WritableKeyPath<Memos, [(value: V, json: [UInt8])?]>, write: (inout FHIRJSON, V) -> Void
    ) {
        guard let value else { return }
        key(name)
        guard let slot = memoSlot else { return write(&self, value) }
        var memo: [(value: V, json: [UInt8])?] = []
        swap(&memo, &memos[keyPath: path])
        defer { swap(&memo, &memos[keyPath: path]) }
        if slot < memo.count, let entry = memo[slot], entry.value == value {
            bytes.append(contentsOf: entry.json)
            return
        }
        let start = bytes.count
        write(&self, value)
        while memo.count <= slot { memo.append(nil) }
        memo[slot] = (value, Array(bytes[start...]))
    }

    /// A kind's `category` (see ``memoized(_:_:in:write:)``).
    mutating func member(_ name: StaticString, memoized value: [FHIR.CodeableConcept]?) {
        memoized(name, value, in: \.category) { json, values in json.array(values) }
    }

    /// A kind's `code` (see ``memoized(_:_:in:write:)``).
    mutating func member(_ name: StaticString, memoized value: FHIR.CodeableConcept?) {
        memoized(name, value, in: \.code) { json, concept in concept.write(to: &json) }
    }

    /// A kind's narrative `text` (see ``memoized(_:_:in:write:)``).
    mutating func member(_ name: StaticString, memoized value: FHIR.Narrative?) {
        memoized(name, value, in: \.text) { json, narrative in narrative.write(to: &json) }
    }

    /// Writes member `"reference"` and notes where its value is (``referenceValues``).
    mutating func reference(_ value: String?) {
        guard let value else { return }
        key("reference")
        let start = bytes.count
        string(value)
        referenceValues.append(start..<bytes.count)
    }

    private mutating func separate() {
        guard let last = hasMember.indices.last else { return }
        if hasMember[last] { bytes.append(UInt8(ascii: ",")) }
        hasMember[last] = true
    }
}

/// A FHIR value that writes itself with ``FHIRJSON``.
protocol FHIRJSONWritable {
    func write(to json: inout FHIRJSON)
}

extension FHIRJSON {
    mutating func member(_ name: StaticString, _ value: (some FHIRJSONWritable)?) {
        guard let value else { return }
        key(name)
        value.write(to: &self)
    }

    mutating func member(_ name: StaticString, _ values: [some FHIRJSONWritable]?) {
        guard let values else { return }
        key(name)
        array(values)
    }

    /// A JSON array of `values`.
    mutating func array(_ values: [some FHIRJSONWritable]) {
        beginArray()
        for value in values {
            element()
            value.write(to: &self)
        }
        endArray()
    }
}

extension FHIR.Coding: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("code", code)
        json.member("display", display)
        json.member("system", system)
        json.endObject()
    }
}

extension FHIR.CodeableConcept: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("coding", coding)
        json.member("text", text)
        json.endObject()
    }
}

extension FHIR.Reference: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("display", display)
        json.reference(reference)
        json.endObject()
    }
}

extension FHIR.Period: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("end", end)
        json.member("start", start)
        json.endObject()
    }
}

extension FHIR.Quantity: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("code", code)
        json.member("system", system)
        json.member("unit", unit)
        json.member("value", number: valueText)
        json.endObject()
    }
}

extension FHIR.Annotation: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("text", text)
        json.endObject()
    }
}

extension FHIR.Narrative: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("div", div)
        json.member("status", status)
        json.endObject()
    }
}

extension FHIR.Observation.Component: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("code", code)
        json.member("valueString", valueString)
        json.endObject()
    }
}

extension FHIR.MedicationStatement.Dosage: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("doseAndRate", doseAndRate)
        json.endObject()
    }
}

extension FHIR.MedicationStatement.DoseAndRate: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("doseQuantity", doseQuantity)
        json.endObject()
    }
}

extension FHIR.Observation: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("category", memoized: category)
        json.member("code", memoized: code)
        json.member("component", component)
        json.member("dataAbsentReason", dataAbsentReason)
        json.member("device", device)
        json.member("effectiveDateTime", effectiveDateTime)
        json.member("effectivePeriod", effectivePeriod)
        json.member("id", id)
        json.member("note", note)
        json.member("resourceType", resourceType)
        json.member("status", status)
        json.member("subject", subject)
        json.member("text", memoized: text)
        json.member("valueQuantity", valueQuantity)
        json.member("valueString", valueString)
        json.endObject()
    }
}

extension FHIR.MedicationStatement: FHIRJSONWritable {
    func write(to json: inout FHIRJSON) {
        json.beginObject()
        json.member("dosage", dosage)
        json.member("effectiveDateTime", effectiveDateTime)
        json.member("effectivePeriod", effectivePeriod)
        json.member("id", id)
        json.member("medicationCodeableConcept", medicationCodeableConcept)
        json.member("note", note)
        json.member("resourceType", resourceType)
        json.member("status", status)
        json.member("subject", subject)
        json.member("text", memoized: text)
        json.endObject()
    }
}
