import CohortCompliance
import CohortCore
import CohortStore
import Foundation

/// Turns one row of text fields into a validated record, or an error naming the field and what
/// was expected. Error messages never repeat the value itself.
final class RecordValidator {
    struct Subject {
        var pk: Int64
        var participant: Participant
        var timeZone: TimeZone
        var firstMs: Int64
        var lastMs: Int64
    }

    let studyProtocol: StudyProtocol
    let file: String
    let nowMs: Int64
    var subjects: [String: Subject] = [:]
    /// Extra checks on a participant and instant (consent, withdrawal), nil when allowed.
    let gate: (Participant, Timestamp) -> CohortError?

    init(workspace: Workspace, studyProtocol: StudyProtocol, file: String) throws {
        self.studyProtocol = studyProtocol
        self.file = file
        self.nowMs = Int64(workspace.now().timeIntervalSince1970 * 1000)
        self.gate = try ImportGates.make(workspace: workspace, studyProtocol: studyProtocol)
        for stored in try workspace.store.participants() {
            let p = stored.participant
            guard let tz = TimeZone(identifier: p.timeZone) else { continue }
            let firstLocal = Int64(p.enrolledOn.daysSinceEpoch) * 86_400_000
            let lastLocal = Int64(p.enrolledOn.adding(days: studyProtocol.durationDays).daysSinceEpoch) * 86_400_000
            let first = firstLocal - Int64(Timestamp.resolveOffset(localMs: firstLocal, in: tz)) * 1000
            let last = lastLocal - Int64(Timestamp.resolveOffset(localMs: lastLocal, in: tz)) * 1000
            subjects[p.code] = Subject(pk: stored.pk, participant: p, timeZone: tz, firstMs: first, lastMs: last)
        }
    }

    func fail(_ line: Int, _ field: String, _ message: String, hint: String? = nil) -> CohortError {
        CohortError.invalid(message, file: file, line: line, field: field, hint: hint)
    }

    func validate(_ fields: [String: String], line: Int) throws -> (Int64, Record) {
        guard let code = fields["participant"] else { throw fail(line, "participant", "a participant study code is required") }
        guard let subject = subjects[code] else {
            throw fail(line, "participant", "no enrolled participant has this study code", hint: "enroll them first (`cohort participant enroll`)")
        }
        guard let kindText = fields["kind"] else { throw fail(line, "kind", "a record kind is required") }
        guard let kind = RecordKind(rawValue: kindText) else {
            throw fail(line, "kind", "unknown record kind",
                hint: Suggest.closest(to: kindText, in: RecordKind.allCases.map(\.rawValue)).map { "did you mean '\($0)'?" } ?? "see the README for record kinds")
        }
        guard studyProtocol.collects(kind) else {
            throw fail(line, "kind", "the protocol does not collect \(kind.rawValue)", hint: "collected: \(studyProtocol.collectedKinds.map(\.rawValue).sorted().joined(separator: ", "))")
        }
        guard let startText = fields["start"] else { throw fail(line, "start", "a start instant is required") }
        guard let start = Timestamp.parse(startText, defaultTimeZone: subject.timeZone) else {
            throw fail(line, "start", "expected an ISO 8601 date-time such as 2025-03-14T08:30:00+01:00 (without an offset it is read in the participant's time zone)")
        }
        var end: Timestamp?
        if let endText = fields["end"] {
            guard let parsed = Timestamp.parse(endText, defaultTimeZone: subject.timeZone) else {
                throw fail(line, "end", "expected an ISO 8601 date-time such as 2025-03-14T23:00:00+01:00")
            }
            guard parsed >= start else { throw fail(line, "end", "the end is before the start") }
            end = parsed
        }
        if start.epochMilliseconds < subject.firstMs {
            throw fail(line, "start", "the record is dated before the participant's enrollment day")
        }
        if start.epochMilliseconds >= subject.lastMs {
            throw fail(line, "start", "the record is dated after the participant's study period (\(studyProtocol.durationDays) days)")
        }
        if start.epochMilliseconds > nowMs + 5 * 60_000 {
            throw fail(line, "start", "the record is dated in the future")
        }
        var value: Double?
        if let valueText = fields["value"] {
            guard let raw = Double(valueText), raw.isFinite else { throw fail(line, "value", "expected a number") }
            let unit = fields["unit"] ?? ""
            guard let converted = Units.toCanonical(raw, unit: unit, kind: kind) else {
                throw fail(line, "unit", "unit not accepted for \(kind.rawValue)", hint: "use one of: \(Units.accepted(for: kind).joined(separator: ", ")) (UCUM)")
            }
            let range = kind.range
            guard range.contains(converted) else {
                throw fail(line, "value", "out of range for \(kind.rawValue): expected \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)) \(kind.canonicalUnit)")
            }
            if kind.isInteger, converted.rounded() != converted {
                throw fail(line, "value", "expected a whole number for \(kind.rawValue)")
            }
            value = converted
        } else if kind.requiresValue {
            throw fail(line, "value", "a value is required for \(kind.rawValue)")
        } else if let unit = fields["unit"], Units.toCanonical(0, unit: unit, kind: kind) == nil {
            throw fail(line, "unit", "unit not accepted for \(kind.rawValue)", hint: "use one of: \(Units.accepted(for: kind).joined(separator: ", "))")
        }
        var text = fields["text"]
        if kind.requiresText, text == nil { throw fail(line, "text", "\(kind.rawValue) needs a text (e.g. the medication name)") }
        if let vocabulary = kind.textVocabulary, let t = text {
            let items = t.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            for item in items where !vocabulary.contains(item) {
                throw fail(line, "text", "unknown \(kind.rawValue) trigger", hint: "use: \(vocabulary.sorted().joined(separator: ", ")) separated by ';'")
            }
            text = items.joined(separator: ";")
        }
        if let t = text, t.count > 500 { throw fail(line, "text", "text longer than 500 characters") }
        if let note = fields["note"], note.count > 5000 { throw fail(line, "note", "note longer than 5000 characters") }
        let record = Record(
            participantID: subject.participant.id, kind: kind, start: start, end: end, value: value, text: text, source: fields["source"],
            note: fields["note"])
        if let refusal = gate(subject.participant, start) {
            var error = refusal
            error.location = .init(file: file, line: line, field: "participant")
            throw error
        }
        return (subject.pk, record)
    }

    static func format(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : String(value)
    }
}

/// Whether data may be imported for a participant at an instant: consent (none, or re-consent
/// due) and withdrawal decide, through the compliance module's per-participant gates.
enum ImportGates {
    static func make(workspace: Workspace, studyProtocol: StudyProtocol) throws -> (Participant, Timestamp) -> CohortError? {
        let rules = ConsentRules(studyProtocol: studyProtocol)
        let histories = try workspace.store.consentHistories()
        var gates: [UUID: CohortCompliance.ImportGate] = [:]
        for stored in try workspace.store.participants() {
            let p = stored.participant
            gates[p.id] = try? rules.importGate(for: ComplianceSubject(p), history: histories[p.id] ?? [])
        }
        return { participant, start in
            guard let gate = gates[participant.id] else {
                return CohortError(.invalidInput, "participant \(participant.code) has an unknown time zone")
            }
            switch gate.check(start) {
            case .allowed: return nil
            case let .refused(reason):
                var error = reason.error()
                error.message = "participant \(participant.code): " + error.message
                return error
            }
        }
    }
}
