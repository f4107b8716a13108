package import CohortCore
package import Foundation

/// Turns one row of text fields into a validated record, or an error naming the field and what
/// was expected. Error messages never repeat the value itself.
///
/// The checks and their order are those of the record rules (README, "Data import"); the work
/// per row is kept small: fields are read as bytes, the last participant and each kind's facts
/// are looked up once, and strings are made only for what is stored.
package final class RecordValidator {
    /// What validation needs of a participant.
    struct Subject: Sendable {
        /// The participant's position in the directory's ``RecordSubjects/enrolledParticipants``.
        var position: Int
        var id: UUID
        var code: String
        var timeZone: TimeZone
        /// The study period and the consent rule.
        var window: RecordWindow
    }

    /// What validation needs to know about a kind, computed once per kind (no references, so
    /// reading it costs no retains).
    struct KindFacts: Sendable {
        var kind: RecordKind
        var collected: Bool
        var range: ClosedRange<Double>
        var isInteger: Bool
        var requiresValue: Bool
        var requiresText: Bool
    }

    /// What this validator knows, shared read only with its copies on other threads
    /// (``init(tables:)``).
    package let tables: Tables
    /// The last row's participant code and subject (rows usually come grouped by participant).
    private var lastCode: [UInt8] = []
    private var lastSubject = -1
    /// The last row's kind, an index into `kinds`.
    private var lastKind = 0

    /// A validator for rows of `file` under `studyProtocol`, looking participants and their
    /// consent up in `directory` once, now; `now` bounds start times (no data from the future).
    package init(directory: any RecordSubjects, studyProtocol: StudyProtocol, file: String, now: Date) throws {
        let admissions = try directory.admissions(studyProtocol: studyProtocol)
        var subjects: [Subject] = []
        var subjectIndex: [String: Int] = [:]
        for (position, p) in directory.enrolledParticipants.enumerated() {
            guard let tz = TimeZone(identifier: p.timeZone) else { continue }
            let window = RecordWindow(
                enrolledOn: p.enrolledOn, timeZone: tz, durationDays: studyProtocol.durationDays, now: now, admission: admissions[p.id])
            subjectIndex[p.code] = subjects.count
            subjects.append(Subject(position: position, id: p.id, code: p.code, timeZone: tz, window: window))
        }
        let kinds = RecordKind.allCases.map { kind in
            KindFacts(
                kind: kind, collected: studyProtocol.collects(kind), range: kind.range, isInteger: kind.isInteger, requiresValue: kind.requiresValue,
                requiresText: kind.requiresText)
        }
        tables = Tables(
            studyProtocol: studyProtocol, file: file, subjects: subjects, subjectIndex: subjectIndex, kinds: kinds,
            kindNames: RecordKind.allCases.map { Array($0.rawValue.utf8) }, canonicalUnits: RecordKind.allCases.map { Array($0.canonicalUnit.utf8) },
            vocabularies: RecordKind.allCases.map(\.textVocabulary))
    }

    /// What a validator knows, without its caches: a copy for another thread
    /// (``init(tables:)``), the tables shared, read only.
    package struct Tables: Sendable {
        let studyProtocol: StudyProtocol
        let file: String
        /// Participants, and their index by study code.
        let subjects: [Subject]
        let subjectIndex: [String: Int]
        /// Kinds in `RecordKind.allCases` order: facts, names, canonical units, text vocabularies.
        let kinds: [KindFacts]
        let kindNames: [[UInt8]]
        let canonicalUnits: [[UInt8]]
        let vocabularies: [Set<String>?]
    }

    /// A validator with `tables` (another validator's) and caches of its own.
    package init(tables: Tables) {
        self.tables = tables
    }

    /// Whether `error`, thrown for one row, refuses that row alone (a value of the wrong form, or a
    /// row consent does not cover): with a rejects file the row is written there and the file
    /// goes on; any other error stops the file.
    package static func refusesRowOnly(_ error: CohortError) -> Bool {
        error.code == .invalidInput || error.code == .policy
    }

    /// Whether `bytes` are exactly `name`.
    static func same(_ name: [UInt8], _ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard name.count == bytes.count else { return false }
        return name.withUnsafeBufferPointer { named in
            guard let a = named.baseAddress, let b = bytes.baseAddress else { return true }  // both empty
            return memcmp(a, b, bytes.count) == 0
        }
    }

    func fail(_ line: Int, _ field: String, _ message: String, hint: String? = nil) -> CohortError {
        CohortError.invalid(message, file: tables.file, line: line, field: field, hint: hint)
    }

    /// The index of the subject whose study code is `code`.
    private func subject(_ code: UnsafeBufferPointer<UInt8>) -> Int? {
        if lastSubject >= 0, Self.same(lastCode, code) { return lastSubject }
        guard let found = tables.subjectIndex[String(decoding: code, as: UTF8.self)] else { return nil }
        lastCode = Array(code)
        lastSubject = found
        return found
    }

    /// The index of the kind named `name`, nil for an unknown kind.
    private func kindIndex(_ name: UnsafeBufferPointer<UInt8>) -> Int? {
        if Self.same(tables.kindNames[lastKind], name) { return lastKind }
        if let index = tables.kindNames.firstIndex(where: { Self.same($0, name) }) {
            lastKind = index
            return index
        }
        // Not byte-equal to a kind name: decide as the string comparison of `RecordKind(rawValue:)` does.
        guard let kind = RecordKind(rawValue: String(decoding: name, as: UTF8.self)) else { return nil }
        return tables.kinds.firstIndex { $0.kind == kind }
    }

    /// The participant's position in the directory's ``RecordSubjects/enrolledParticipants`` and
    /// the validated record of one row, read from `line`.
    ///
    /// - Throws: `CohortError` (`invalidInput`, `policy`) naming the file, line and field and
    ///   what was expected — never the value.
    package func validate(_ fields: RecordFields, line: Int) throws -> (Int, Record) {
        guard let code = fields[.participant] else { throw fail(line, "participant", "a participant study code is required") }
        guard let subjectIndex = subject(code) else {
            throw fail(line, "participant", "no enrolled participant has this study code", hint: "enroll them first (`cohort participant enroll`)")
        }
        guard let kindBytes = fields[.kind] else { throw fail(line, "kind", "a record kind is required") }
        guard let kindIndex = kindIndex(kindBytes) else {
            let kindText = String(decoding: kindBytes, as: UTF8.self)
            throw fail(line, "kind", "unknown record kind",
                hint: Suggest.closest(to: kindText, in: RecordKind.allCases.map(\.rawValue)).map { "did you mean '\($0)'?" } ?? "see the README for record kinds")
        }
        let subject = tables.subjects[subjectIndex]
        let facts = tables.kinds[kindIndex]
        let kind = facts.kind
        guard facts.collected else {
            throw fail(line, "kind", "the protocol does not collect \(kind.rawValue)", hint: "collected: \(tables.studyProtocol.collectedKinds.map(\.rawValue).sorted().joined(separator: ", "))")
        }
        guard let startBytes = fields[.start] else { throw fail(line, "start", "a start instant is required") }
        guard let start = Timestamp.parse(startBytes, defaultTimeZone: subject.timeZone) else {
            throw fail(line, "start", "expected an ISO 8601 date-time such as 2025-03-14T08:30:00+01:00 (without an offset it is read in the participant's time zone)")
        }
        var end: Timestamp?
        if let endBytes = fields[.end] {
            guard let parsed = Timestamp.parse(endBytes, defaultTimeZone: subject.timeZone) else {
                throw fail(line, "end", "expected an ISO 8601 date-time such as 2025-03-14T23:00:00+01:00")
            }
            guard parsed >= start else { throw fail(line, "end", "the end is before the start") }
            end = parsed
        }
        switch subject.window.periodRefusal(start.epochMilliseconds) {
        case .beforeEnrollment?:
            var error = fail(line, "start", "the record is dated before the participant's enrollment day")
            error.cause = .recordBeforeEnrollment
            throw error
        case .afterStudyPeriod?:
            var error = fail(line, "start", "the record is dated after the participant's study period (\(tables.studyProtocol.durationDays) days)")
            error.cause = .recordAfterStudyPeriod
            throw error
        case .future?:
            throw fail(line, "start", "the record is dated in the future")
        case nil:
            break
        }
        var value: Double?
        if let valueBytes = fields[.value] {
            guard let raw = Self.number(valueBytes), raw.isFinite else { throw fail(line, "value", "expected a number") }
            let converted: Double
            if let unit = fields[.unit], !Self.same(tables.canonicalUnits[kindIndex], unit) {
                guard let c = Units.toCanonical(raw, unit: String(decoding: unit, as: UTF8.self), kind: kind) else {
                    throw fail(line, "unit", "unit not accepted for \(kind.rawValue)", hint: "use one of: \(Units.accepted(for: kind).joined(separator: ", ")) (UCUM)")
                }
                converted = c
            } else {
                converted = raw  // no unit, or the canonical one
            }
            let range = facts.range
            guard range.contains(converted) else {
                throw fail(line, "value", "out of range for \(kind.rawValue): expected \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound)) \(kind.canonicalUnit)")
            }
            if facts.isInteger, converted.rounded() != converted {
                throw fail(line, "value", "expected a whole number for \(kind.rawValue)")
            }
            value = converted
        } else if facts.requiresValue {
            throw fail(line, "value", "a value is required for \(kind.rawValue)")
        } else if let unit = fields.string(.unit), Units.toCanonical(0, unit: unit, kind: kind) == nil {
            throw fail(line, "unit", "unit not accepted for \(kind.rawValue)", hint: "use one of: \(Units.accepted(for: kind).joined(separator: ", "))")
        }
        var text = fields.string(.text)
        if facts.requiresText, text == nil { throw fail(line, "text", "\(kind.rawValue) needs a text (e.g. the medication name)") }
        if let vocabulary = tables.vocabularies[kindIndex], let t = text {
            let items = t.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
            for item in items where !vocabulary.contains(item) {
                throw fail(
                    line, "text", kind == .workout ? "unknown workout activity type" : "unknown \(kind.rawValue) trigger",
                    hint: kind == .workout
                        ? "use one of: \(vocabulary.sorted().joined(separator: ", "))"
                        : "use: \(vocabulary.sorted().joined(separator: ", ")) separated by ';'")
            }
            text = items.joined(separator: ";")
        }
        // A string never has more characters than UTF-8 bytes: count characters only when needed.
        if let t = text, t.utf8.count > 500, t.count > 500 { throw fail(line, "text", "text longer than 500 characters") }
        let note = fields.string(.note)
        if let note, note.utf8.count > 5000, note.count > 5000 { throw fail(line, "note", "note longer than 5000 characters") }
        let record = Record(
            participantID: subject.id, kind: kind, start: start, end: end, value: value, text: text, source: fields.string(.source),
            note: note)
        if let refusal = subject.window.consentRefusal(at: start, code: subject.code) {
            var error = refusal
            error.location = .init(file: tables.file, line: line, field: "participant")
            throw error
        }
        return (subject.position, record)
    }

    /// Powers of ten that are exact doubles.
    private static let powersOfTen: [Double] = (0...22).map { (0..<$0).reduce(1.0) { r, _ in r * 10 } }

    /// The number `bytes` spell, exactly as `Double(String)` reads it. Plain decimals of up to 15
    /// digits (`-12.5`) are read directly: the digits make an exact integer below 2^53 and the
    /// power of ten is exact, so one division gives the correctly rounded result, as `strtod`
    /// does. Anything else (exponents, `inf`, hex, long numbers) goes to `Double(String)`.
    static func number(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        var i = 0
        let n = bytes.count
        var negative = false
        if i < n, bytes[i] == 0x2D || bytes[i] == 0x2B {
            negative = bytes[i] == 0x2D
            i += 1
        }
        var mantissa: Int64 = 0
        var digits = 0
        var fractionDigits = 0
        var sawPoint = false
        var plain = i < n
        while i < n {
            let c = bytes[i]
            if c >= 0x30, c <= 0x39 {
                mantissa = mantissa &* 10 &+ Int64(c &- 0x30)
                digits += 1
                if sawPoint { fractionDigits += 1 }
            } else if c == 0x2E, !sawPoint {
                sawPoint = true
            } else {
                plain = false
                break
            }
            i += 1
        }
        // Require digits on both sides of a point ("5." and ".5" go the general way).
        if plain, digits > 0, digits <= 15, !sawPoint || (fractionDigits > 0 && fractionDigits < digits) {
            let magnitude = Double(mantissa) / powersOfTen[fractionDigits]
            return negative ? -magnitude : magnitude
        }
        return Double(String(decoding: bytes, as: UTF8.self))
    }

    static func format(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : String(value)
    }
}
