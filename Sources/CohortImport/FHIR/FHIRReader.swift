import CohortIO
package import CohortCore
package import Foundation

/// Reads FHIR R4 JSON — Bulk Data NDJSON (one resource per line; a file or a folder of them) and
/// Bundles (collection, transaction, batch, searchset) — into records.
///
/// - `Patient` is matched to the roster: an identifier in the protocol's
///   `import.patient_identifier_system` whose value is a participant's MRN, an identifier value
///   the user map names, or (with an export recipient) a pseudonym of cohort's own export. A
///   patient that matches none is an error, never an enrollment.
/// - `Observation` (and each of its `component`s) becomes a record when a coding maps to a kind
///   the protocol collects (``FHIRCodeMap``); `MedicationStatement` and
///   `MedicationAdministration` become `medication_dose`; `Condition` becomes a record only when
///   the protocol's code map maps its code (e.g. to `flare`). Quantities are converted to the
///   kind's canonical UCUM unit.
/// - Anything else (other resource types, unmapped codes, `entered-in-error`, values withheld by
///   `dataAbsentReason`) is counted in ``tally`` by reason.
///
/// Errors name file:line and the FHIR path (`Observation.valueQuantity.unit`), never a value.
/// Patients must come before the resources that refer to them: in a folder, files named
/// `Patient*` are read first.
package final class FHIRReader {
    public let directory: ParticipantDirectory
    package let settings: ImportSettings
    public let collected: Set<RecordKind>
    let codeMap: FHIRCodeMap
    /// What was read and skipped.
    public private(set) var tally = ImportTally()
    /// Reference (`Patient/x`, `urn:uuid:x`) → the participant it was matched to.
    private var patients: [String: Matched] = [:]
    private var zones: [String: TimeZone] = [:]
    /// For a partial import (`--rejects`): called with the error of each resource the reader
    /// cannot map (a unit it cannot convert, no subject…), which is then skipped; nil = the first
    /// such error ends the read (one transaction, nothing stored).
    package var rejecting: ((CohortError) throws -> Void)?

    /// The largest `.json` file (a Bundle) read whole; NDJSON is read line by line.
    package static let maxBundleBytes = 256 << 20
    /// The longest NDJSON line.
    package static let maxLineBytes = 16 << 20

    struct Matched {
        var code: String
        var shiftDays: Int
        var zone: TimeZone?
    }

    /// Where a resource is: its file and line, and the path prefix of its elements
    /// (`Observation` or `Bundle.entry[3].resource`).
    struct Place {
        var file: String
        var line: Int
        var path: String
        func error(_ message: String, _ element: String, hint: String? = nil) -> CohortError {
            CohortError.invalid(message, file: file, line: line, field: element.isEmpty ? path : "\(path).\(element)", hint: hint)
        }
    }

    package init(directory: ParticipantDirectory, settings: ImportSettings, collected: Set<RecordKind>) {
        self.directory = directory
        self.settings = settings
        self.collected = collected
        codeMap = FHIRCodeMap(settings: settings)
    }

    /// The FHIR files under `url` (itself when it is a file): `.ndjson`, `.jsonl` and `.json` in
    /// the folder (not its subfolders), `Patient*` first, `manifest.json` (Bulk Data) left out.
    public static func files(at url: URL) throws -> [URL] {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw CohortError(.notFound, "cannot read the FHIR input", at: .init(file: url.path), hint: "check the path")
        }
        guard isFolder.boolValue else { return [url] }
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { name in
            let ext = (name as NSString).pathExtension.lowercased()
            return ["ndjson", "jsonl", "json"].contains(ext) && name != "manifest.json"
        }
        guard !names.isEmpty else {
            throw CohortError.invalid("the folder holds no .ndjson or .json files", file: url.path, hint: "point at a FHIR Bulk Data export folder")
        }
        let sorted = names.sorted { a, b in
            let pa = a.hasPrefix("Patient"), pb = b.hasPrefix("Patient")
            return pa != pb ? pa : a < b
        }
        return sorted.map { url.appendingPathComponent($0) }
    }

    /// Reads one file, calling `body` with each record.
    public func read(file url: URL, _ body: (SourceRecord) throws -> Void) throws {
        let file = url.path
        switch url.pathExtension.lowercased() {
        case "json":
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue ?? 0
            guard size <= Self.maxBundleBytes else {
                throw CohortError.invalid("the .json file is larger than \(Self.maxBundleBytes >> 20) MiB", file: file,
                    hint: "use Bulk Data NDJSON (one resource per line) for large inputs")
            }
            guard let data = FileManager.default.contents(atPath: file) else { throw CohortError(.notFound, "cannot read the file", at: .init(file: file)) }
            try resource(parse(data, file: file, line: 1), Place(file: file, line: 1, path: ""), body)
        default:
            try LineReader.forEachLine(of: url, maxLineBytes: Self.maxLineBytes) { line, bytes in
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
                try resource(parse(Data(bytes), file: file, line: line), Place(file: file, line: line, path: ""), body)
            }
        }
    }

    func parse(_ data: Data, file: String, line: Int) throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: data) else {
            throw CohortError.invalid("not valid JSON", file: file, line: line, hint: "each line of an NDJSON file is one FHIR resource")
        }
        guard let dict = object as? [String: Any] else {
            throw CohortError.invalid("expected a FHIR resource (a JSON object)", file: file, line: line)
        }
        return dict
    }

    // MARK: - Resources

    func resource(_ r: [String: Any], _ at: Place, _ body: (SourceRecord) throws -> Void, fullUrl: String? = nil) throws {
        guard let type = r["resourceType"] as? String else {
            throw at.error("expected resourceType", at.path.isEmpty ? "resourceType" : "resourceType", hint: "each line or file is one FHIR R4 resource")
        }
        let place = Place(file: at.file, line: at.line, path: at.path.isEmpty ? type : at.path)
        if type == "Bundle" { return try bundle(r, place, body) }
        tally.seen += 1
        do {
            switch type {
            case "Patient": try patient(r, place, fullUrl: fullUrl)
            case "Observation": try observation(r, place, body)
            case "MedicationStatement", "MedicationAdministration": try medication(r, type, place, body)
            case "Condition": try condition(r, place, body)
            default: tally.skip("resource type not imported: \(type)")
            }
        } catch let error as CohortError where rejecting != nil && error.code == .invalidInput {
            // A partial import (--rejects): this resource is refused, the others go on.
            try rejecting?(error)
        }
    }

    static let bundleTypes: Set<String> = ["collection", "transaction", "batch", "searchset"]

    func bundle(_ b: [String: Any], _ at: Place, _ body: (SourceRecord) throws -> Void) throws {
        guard let type = b["type"] as? String, Self.bundleTypes.contains(type) else {
            throw at.error("expected a Bundle of type collection, transaction, batch or searchset", "type",
                hint: "other Bundle types (history, document, message…) are not imported")
        }
        let entries = (b["entry"] as? [Any]) ?? []
        // Patients first, so entries may refer to a Patient later in the Bundle.
        for pass in 0..<2 {
            for (i, item) in entries.enumerated() {
                let path = "\(at.path).entry[\(i)]"
                guard let entry = item as? [String: Any], let resource = entry["resource"] as? [String: Any] else {
                    if pass == 0, let entry = item as? [String: Any], entry["request"] != nil, entry["resource"] == nil { continue }
                    if pass == 0 { throw Place(file: at.file, line: at.line, path: path).error("expected an entry with a resource", "resource") }
                    continue
                }
                let isPatient = resource["resourceType"] as? String == "Patient"
                guard isPatient == (pass == 0) else { continue }
                // A searchset's `include` entries and a transaction's DELETEs carry no data to import.
                if let request = entry["request"] as? [String: Any], request["method"] as? String == "DELETE" { continue }
                try self.resource(resource, Place(file: at.file, line: at.line, path: "\(path).resource"), body, fullUrl: entry["fullUrl"] as? String)
            }
        }
    }

    func patient(_ p: [String: Any], _ at: Place, fullUrl: String?) throws {
        var match: Matched?
        for item in (p["identifier"] as? [Any]) ?? [] {
            guard let identifier = item as? [String: Any], let value = identifier["value"] as? String else { continue }
            let system = identifier["system"] as? String
            if let mrnSystem = settings.patientIdentifierSystem, system == mrnSystem, let code = directory.mrns[value] {
                match = Matched(code: code, shiftDays: 0, zone: nil)
            } else if let code = directory.userMap.codes[value] {
                let shift = directory.userMap.shifts[value] ?? 0
                match = Matched(code: code, shiftDays: shift, zone: directory.timeZones[code].flatMap(zone))
            } else if let system, system.hasPrefix(Self.cohortIdentifierBase), system.hasSuffix("/pseudonym"), let p = directory.pseudonyms[value] {
                match = Matched(code: p.code, shiftDays: p.shiftDays, zone: zone(p.timeZone))
            }
            if match != nil { break }
        }
        guard let match else {
            let expected = settings.patientIdentifierSystem.map { "an identifier in \($0) that is a roster MRN, " } ?? ""
            throw at.error("the Patient matches no participant", "identifier",
                hint: "expected \(expected)an identifier value named in --user-map, or a pseudonym of the --recipient's export; patients are never enrolled by import")
        }
        if let id = p["id"] as? String {
            patients["Patient/\(id)"] = match
            patients["urn:uuid:\(id)"] = match
        }
        if let fullUrl { patients[fullUrl] = match }
        tally.patients += 1
    }

    /// The base of the identifier systems cohort's exports write (`…/sid/<study>/pseudonym`).
    static let cohortIdentifierBase = "https://cohort.example.org/fhir/sid/"

    func zone(_ name: String) -> TimeZone? {
        if let z = zones[name] { return z }
        let z = TimeZone(identifier: name)
        zones[name] = z
        return z
    }

    func subject(_ r: [String: Any], _ at: Place) throws -> Matched {
        guard let subject = r["subject"] as? [String: Any] else {
            throw at.error("expected a subject (the Patient)", "subject")
        }
        if let reference = subject["reference"] as? String {
            guard let match = patients[reference] else {
                throw at.error("refers to a Patient that is not in the input (or was not read before it)", "subject.reference",
                    hint: "import the Patient resources too: Patient.ndjson in the same folder, or the Patient entry in the Bundle")
            }
            return match
        }
        if let identifier = subject["identifier"] as? [String: Any] {
            let logical: [String: Any] = ["resourceType": "Patient", "identifier": [identifier]]
            let before = patients
            defer { patients = before }
            try patient(logical, Place(file: at.file, line: at.line, path: "\(at.path).subject"), fullUrl: "logical")
            tally.patients -= 1
            if let match = patients["logical"] { return match }
        }
        throw at.error("expected subject.reference", "subject.reference")
    }

    static let skippedStatuses: Set<String> = ["entered-in-error", "cancelled", "not-done", "stopped", "preliminary", "registered"]

    func codings(_ concept: Any?) -> [(system: String, code: String)] {
        guard let concept = concept as? [String: Any], let codings = concept["coding"] as? [Any] else { return [] }
        return codings.compactMap { item in
            guard let c = item as? [String: Any], let system = c["system"] as? String, let code = c["code"] as? String else { return nil }
            return (system, code)
        }
    }

    /// The kind for `concept`, or nil after counting why not.
    func mappedKind(_ concept: Any?, label: String) -> RecordKind? {
        let codes = codings(concept)
        guard let kind = codeMap.kind(in: codes) else {
            tally.skip("\(label): code not in the code map\(codes.first.map { " (\($0.system)|\($0.code))" } ?? "")")
            return nil
        }
        guard collected.contains(kind) else {
            tally.skip("not collected: \(kind.rawValue)")
            return nil
        }
        return kind
    }

    func observation(_ o: [String: Any], _ at: Place, _ body: (SourceRecord) throws -> Void) throws {
        if let status = o["status"] as? String, Self.skippedStatuses.contains(status) {
            tally.skip("status \(status)")
            return
        }
        // cohort's own export writes overlap-free daily totals beside the samples: derived, never re-imported.
        if codings(o["code"]).contains(where: { $0.system == Coding.localSystem && $0.code.hasPrefix(DailyTotals.fhirCodePrefix) }) {
            tally.skip("Observation: a daily total (derived from the samples, which are imported)")
            return
        }
        var emitted = false
        if let kind = mappedKind(o["code"], label: "Observation") {
            if o["dataAbsentReason"] != nil, o["valueQuantity"] == nil {
                tally.skip("value absent (dataAbsentReason)")
            } else {
                let who = try subject(o, at)
                var record = try base(o, kind: kind, who: who, at)
                try value(of: o, kind: kind, into: &record, at, element: "")
                if kind == .workout { workoutActivity(of: o, into: &record, at) }
                try emit(record, kind, body)
                emitted = true
            }
        }
        // Components (blood pressure's systolic and diastolic…) map on their own codes.
        for (i, item) in ((o["component"] as? [Any]) ?? []).enumerated() {
            guard let component = item as? [String: Any] else { continue }
            if Self.isWorkoutActivity(component) { continue }
            guard let kind = mappedKind(component["code"], label: "Observation.component") else { continue }
            let who = try subject(o, at)
            var record = try base(o, kind: kind, who: who, at)
            try value(of: component, kind: kind, into: &record, at, element: "component[\(i)].")
            try emit(record, kind, body)
            emitted = true
        }
        _ = emitted
    }

    /// A workout's activity type: the `workout_activity` component cohort's export writes.
    func workoutActivity(of o: [String: Any], into record: inout SourceRecord, _ at: Place) {
        for (i, item) in ((o["component"] as? [Any]) ?? []).enumerated() {
            guard let component = item as? [String: Any], Self.isWorkoutActivity(component), let text = component["valueString"] as? String else { continue }
            record.text = text
            record.origins["text"] = "\(at.path).component[\(i)].valueString"
            return
        }
    }

    static func isWorkoutActivity(_ component: [String: Any]) -> Bool {
        let codings = ((component["code"] as? [String: Any])?["coding"] as? [Any]) ?? []
        return codings.contains { c in
            guard let c = c as? [String: Any] else { return false }
            return c["system"] as? String == Coding.localSystem && c["code"] as? String == "workout_activity"
        }
    }

    func medication(_ m: [String: Any], _ type: String, _ at: Place, _ body: (SourceRecord) throws -> Void) throws {
        if let status = m["status"] as? String, Self.skippedStatuses.contains(status) {
            tally.skip("status \(status)")
            return
        }
        let kind = RecordKind.medicationDose
        guard collected.contains(kind) else {
            tally.skip("not collected: \(kind.rawValue)")
            return
        }
        let who = try subject(m, at)
        var record = try base(m, kind: kind, who: who, at)
        let concept = m["medicationCodeableConcept"] as? [String: Any]
        let firstCoding = (concept?["coding"] as? [Any])?.first as? [String: Any]
        guard let name = (concept?["text"] as? String) ?? (firstCoding?["display"] as? String) ?? (firstCoding?["code"] as? String) else {
            throw at.error("expected the medication's name or code", "medicationCodeableConcept",
                hint: "medicationReference is not resolved; give medicationCodeableConcept.text or a coding")
        }
        record.text = name
        record.origins["text"] = "\(at.path).medicationCodeableConcept"
        // The dose: MedicationStatement.dosage[0].doseAndRate[0].doseQuantity or MedicationAdministration.dosage.dose.
        var dose: [String: Any]?
        var element = ""
        if type == "MedicationStatement" {
            let dosage = (m["dosage"] as? [Any])?.first as? [String: Any]
            dose = ((dosage?["doseAndRate"] as? [Any])?.first as? [String: Any])?["doseQuantity"] as? [String: Any]
            element = "dosage[0].doseAndRate[0].doseQuantity"
        } else {
            dose = (m["dosage"] as? [String: Any])?["dose"] as? [String: Any]
            element = "dosage.dose"
        }
        if let dose { try quantity(dose, kind: kind, into: &record, at, element: element) }
        try emit(record, kind, body)
    }

    func condition(_ c: [String: Any], _ at: Place, _ body: (SourceRecord) throws -> Void) throws {
        if let status = codings(c["verificationStatus"]).first?.code, status == "entered-in-error" || status == "refuted" {
            tally.skip("status \(status)")
            return
        }
        guard let kind = mappedKind(c["code"], label: "Condition") else { return }
        let who = try subject(c, at)
        guard let start = (c["onsetDateTime"] as? String) ?? ((c["onsetPeriod"] as? [String: Any])?["start"] as? String) ?? (c["recordedDate"] as? String)
        else {
            throw at.error("expected when the condition began", "onsetDateTime", hint: "give onsetDateTime, onsetPeriod.start or recordedDate")
        }
        let end = (c["abatementDateTime"] as? String) ?? ((c["onsetPeriod"] as? [String: Any])?["end"] as? String)
        var record = SourceRecord(
            participant: who.code, kind: kind.rawValue, start: try time(start, who, at, "onsetDateTime"), file: at.file, line: at.line,
            origins: ["start": "\(at.path).onset[x]", "end": "\(at.path).abatementDateTime", "participant": "\(at.path).subject"])
        if let end { record.end = try time(end, who, at, "abatementDateTime") }
        if let severity = codings(c["severity"]).first?.code, let score = Self.severityScores[severity] {
            record.value = score
            record.unit = kind.canonicalUnit
            record.origins["value"] = "\(at.path).severity"
        }
        try emit(record, kind, body)
    }

    /// SNOMED CT severity (mild, moderate, severe) as a 0–10 score for `flare`.
    static let severityScores = ["255604002": "3", "6736007": "6", "24484000": "9"]

    /// A record with the resource's subject, timing, device and note.
    func base(_ r: [String: Any], kind: RecordKind, who: Matched, _ at: Place) throws -> SourceRecord {
        var start: String?, end: String?, element = "effectiveDateTime"
        if let dateTime = r["effectiveDateTime"] as? String {
            start = dateTime
        } else if let instant = r["effectiveInstant"] as? String {
            start = instant
            element = "effectiveInstant"
        } else if let period = r["effectivePeriod"] as? [String: Any] {
            start = period["start"] as? String
            end = period["end"] as? String
            element = "effectivePeriod.start"
        } else if let instant = r["issued"] as? String {
            start = instant
            element = "issued"
        }
        guard let start else {
            throw at.error("expected when it happened", "effective[x]", hint: "give effectiveDateTime, effectivePeriod or effectiveInstant")
        }
        var record = SourceRecord(
            participant: who.code, kind: kind.rawValue, start: try time(start, who, at, element), file: at.file, line: at.line,
            origins: ["start": "\(at.path).\(element)", "end": "\(at.path).effectivePeriod.end", "participant": "\(at.path).subject", "kind": "\(at.path).code"])
        if let end { record.end = try time(end, who, at, "effectivePeriod.end") }
        // Only a device's display text (cohort's own export writes the source there); references
        // to Device resources are not followed, and device names are never read from elsewhere.
        if let device = (r["device"] as? [String: Any])?["display"] as? String, !device.isEmpty {
            record.source = device
            record.origins["source"] = "\(at.path).device.display"
        }
        if let note = ((r["note"] as? [Any])?.first as? [String: Any])?["text"] as? String, !note.isEmpty {
            record.note = note
            record.origins["note"] = "\(at.path).note[0].text"
        }
        return record
    }

    func value(of r: [String: Any], kind: RecordKind, into record: inout SourceRecord, _ at: Place, element prefix: String) throws {
        if let q = r["valueQuantity"] as? [String: Any] {
            try quantity(q, kind: kind, into: &record, at, element: "\(prefix)valueQuantity")
        } else if let n = r["valueInteger"] as? NSNumber {
            record.value = n.stringValue
            record.unit = kind.canonicalUnit
            record.origins["value"] = "\(at.path).\(prefix)valueInteger"
        } else if let s = r["valueString"] as? String {
            record.text = s
            record.origins["text"] = "\(at.path).\(prefix)valueString"
        } else if kind.requiresValue {
            throw at.error("expected a value", "\(prefix)value[x]", hint: "\(kind.rawValue) needs valueQuantity (in \(Units.accepted(for: kind).joined(separator: ", ")))")
        }
    }

    func quantity(_ q: [String: Any], kind: RecordKind, into record: inout SourceRecord, _ at: Place, element: String) throws {
        guard let number = q["value"] as? NSNumber, String(cString: number.objCType) != "c" else {
            throw at.error("expected a number", "\(element).value")
        }
        // The UCUM code when the system is UCUM (or absent), else the human unit.
        let code = q["code"] as? String, unit = q["unit"] as? String
        let system = q["system"] as? String
        let ucum = (system == nil || system == "http://unitsofmeasure.org") ? (code ?? unit) : unit
        let unitElement = code != nil ? "\(element).code" : "\(element).unit"
        let given = ucum ?? ""
        guard let converted = Units.toCanonical(number.doubleValue, unit: Self.ucumAliases[given] ?? given, kind: kind) else {
            throw at.error("the unit is not accepted for \(kind.rawValue)", unitElement,
                hint: "use one of \(Units.accepted(for: kind).joined(separator: ", ")) (UCUM)")
        }
        let same = given.isEmpty || given == kind.canonicalUnit || Self.ucumAliases[given] == kind.canonicalUnit
        record.value = same ? number.stringValue : Self.numberText(converted)
        record.unit = kind.canonicalUnit
        record.origins["value"] = "\(at.path).\(element).value"
        record.origins["unit"] = "\(at.path).\(unitElement)"
    }

    /// A converted number as text: whole numbers without a fraction (steps stay integers).
    static func numberText(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    /// Unit spellings common in FHIR feeds for cohort's canonical units.
    static let ucumAliases = [
        "beats/minute": "/min", "beats/min": "/min", "bpm": "/min", "{beat}/min": "/min", "breaths/minute": "/min", "{breath}/min": "/min",
        "steps": "{steps}", "{step}": "{steps}", "1": "{steps}", "lbs": "[lb_av]", "lb": "[lb_av]", "hour": "h", "hours": "h", "hr": "h",
        "minutes": "min",
    ]

    /// `text` as the record's time: as given, or with a recipient's date shift undone (the
    /// wall-clock time in the participant's zone, moved back by the shift).
    func time(_ text: String, _ who: Matched, _ at: Place, _ element: String) throws -> String {
        guard who.shiftDays != 0 else { return text }
        guard let zone = who.zone, let instant = Timestamp.parse(text, defaultTimeZone: zone) else {
            throw at.error("expected an ISO 8601 date-time", element)
        }
        let offset = Int64(zone.secondsFromGMT(for: instant.date)) * 1000
        let local = instant.epochMilliseconds + offset - Int64(who.shiftDays) * 86_400_000
        let day = Timestamp.floorDiv(local, 86_400_000)
        let ms = local - day * 86_400_000
        let date = CivilDate(daysSinceEpoch: Int(day))
        let h = ms / 3_600_000, m = ms / 60_000 % 60, s = ms / 1000 % 60, frac = ms % 1000
        var result = "\(date.description)T" + String(format: "%02d:%02d:%02d", h, m, s)
        if frac != 0 { result += String(format: ".%03d", frac) }
        return result
    }

    func emit(_ record: SourceRecord, _ kind: RecordKind, _ body: (SourceRecord) throws -> Void) throws {
        tally.took(kind.rawValue)
        var record = record
        record.item = kind.rawValue
        try body(record)
    }
}
