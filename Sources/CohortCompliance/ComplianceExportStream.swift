package import CohortCore
package import Foundation

/// The export form of a compliance report (``ComplianceReport/forExport(pseudonym:)``), computed
/// and written one participant at a time, so that memory does not grow with the cohort: an
/// export streams each participant's records once, and this counts them on the way.
///
/// The bytes are exactly those of `report.forExport(…).jsonData()` for the same participants
/// and records (a test pins it): pretty JSON with sorted keys, participants in the order begun,
/// rule summaries over those participants, no reminders.
///
/// Use: ``begin(_:pseudonym:)`` for each participant, ``add(kind:start:)`` for each of their
/// records, then ``finish()`` once. Output goes to `sink` as it is produced.
package struct ComplianceExportStream {
    private let studyProtocol: StudyProtocol
    private let asOf: Date
    private let sink: (Data) throws -> Void
    /// The current participant's engine (one participant at a time) and their pseudonym.
    private var current: (engine: ComplianceEngine, id: UUID, pseudonym: String)?
    private var written = 0
    /// Per rule, what the cohort summary needs: result count, rates, compliant count.
    private var tallies: [Tally]
    /// The text before the first participant (`{ "as_of" : …, "participants" : `).
    private let head: Data
    private var finished = false

    private struct Tally {
        var results = 0
        var rates: [Double] = []
        var compliant = 0
    }

    /// Starts the report: writes its opening to `sink`.
    ///
    /// - Parameters:
    ///   - asOf: the instant compliance is judged at (as in ``ComplianceEngine/init(studyProtocol:asOf:)``).
    ///   - sink: receives the JSON bytes in order.
    package init(studyProtocol: StudyProtocol, asOf: Date, sink: @escaping (Data) throws -> Void) throws {
        self.studyProtocol = studyProtocol
        self.asOf = asOf
        self.sink = sink
        tallies = Array(repeating: Tally(), count: studyProtocol.compliance.rules.count)
        let parts = try Self.skeletonParts(ComplianceEngine(studyProtocol: studyProtocol, asOf: asOf).report())
        head = parts.head
        try sink(head)
    }

    /// Starts the next participant (closing the previous one), labelled `pseudonym` in the report.
    ///
    /// - Throws: `CohortError` when the participant's time zone is unknown, or from `sink`.
    public mutating func begin(_ subject: ComplianceSubject, pseudonym: String) throws {
        try closeParticipant()
        var engine = ComplianceEngine(studyProtocol: studyProtocol, asOf: asOf)
        try engine.add(participant: subject)
        current = (engine, subject.id, pseudonym)
    }

    /// Counts one record of the current participant (ignored before the first ``begin(_:pseudonym:)``).
    public mutating func add(kind: RecordKind, start: Timestamp) {
        guard let id = current?.id else { return }
        current?.engine.add(recordOf: id, kind: kind, start: start)
    }

    /// Counts one record of the current participant with its end, value and source, so the
    /// protocol's `min_total` rules (overlap-free daily totals) see it too.
    public mutating func add(_ record: Record) {
        add(kind: record.kind, start: record.start, end: record.end, value: record.value, source: record.source)
    }

    /// ``add(_:)`` from the fields it reads (the export's write stage carries only these).
    public mutating func add(kind: RecordKind, start: Timestamp, end: Timestamp?, value: Double?, source: String?) {
        guard let id = current?.id else { return }
        current?.engine.add(recordOf: id, kind: kind, start: start)
        if let value, current?.engine.countsTotals(of: kind) == true {
            current?.engine.add(sampleOf: id, kind: kind, start: start, end: end, value: value, source: source)
        }
    }

    /// Closes the last participant and writes the rest of the report: the rule summaries over
    /// every participant written.
    ///
    /// - Throws: `CohortError` (`conflict`) when called twice; errors from `sink`.
    public mutating func finish() throws {
        guard !finished else {
            throw CohortError(.conflict, "the compliance report was already finished", hint: "start a new stream for another report")
        }
        try closeParticipant()
        finished = true
        var skeleton = ComplianceEngine(studyProtocol: studyProtocol, asOf: asOf).report()
        for index in skeleton.rules.indices {
            let tally = tallies[index]
            skeleton.rules[index].recompute(results: tally.results, sortedRates: tally.rates.sorted(), compliant: tally.compliant)
        }
        let parts = try Self.skeletonParts(skeleton)
        guard parts.head == head else {
            throw CohortError(.system, "the compliance report's opening changed while it was written")
        }
        try sink(written == 0 ? parts.emptyArray : Data("\n  ]".utf8))
        try sink(parts.tail)
    }

    /// Encodes the current participant's entry (export form) and tallies it for the summaries.
    private mutating func closeParticipant() throws {
        guard let (engine, _, pseudonym) = current else { return }
        current = nil
        let report = engine.report().forExport { _ in pseudonym }
        guard let entry = report.participants.first else { return }
        for (index, result) in entry.rules.enumerated() where index < tallies.count {
            tallies[index].results += 1
            if let rate = result.rate { tallies[index].rates.append(rate) }
            if result.compliant == true { tallies[index].compliant += 1 }
        }
        let json = try CanonicalJSON.pretty(entry)
        // Built in an array and handed over as one `Data`: appending to `Data` a byte at a time
        // went through its generic `replaceSubrange` for every byte (issue 28, twelfth round).
        var out: [UInt8] = Array(written == 0 ? "[\n".utf8 : ",\n".utf8)
        out.reserveCapacity(json.count + json.count / 4)
        // The entry sits two levels deep: four more spaces on every non-empty line.
        json.withUnsafeBytes { bytes in
            var lineStart = true
            for byte in bytes {
                if lineStart && byte != 0x0A { for _ in 0..<4 { out.append(0x20) } }
                out.append(byte)
                lineStart = byte == 0x0A
            }
        }
        try sink(Data(out))
        written += 1
    }

    /// Cuts the pretty JSON of a report without participants around its `participants` value.
    private static func skeletonParts(_ report: ComplianceReport) throws -> (head: Data, emptyArray: Data, tail: Data) {
        var empty = report
        empty.participants = []
        empty.reminders = []
        let bytes = [UInt8](try empty.jsonData())
        let key = Array("\n  \"participants\" : ".utf8)
        let next = Array(",\n  \"".utf8)
        guard let keyAt = firstIndex(of: key, in: bytes, from: 0) else {
            throw CohortError(.system, "the compliance report has no participants member")
        }
        let valueAt = keyAt + key.count
        guard let valueEnd = firstIndex(of: next, in: bytes, from: valueAt) else {
            throw CohortError(.system, "the compliance report's participants member is last")
        }
        return (Data(bytes[..<valueAt]), Data(bytes[valueAt..<valueEnd]), Data(bytes[valueEnd...]))
    }

    private static func firstIndex(of pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard pattern.count <= bytes.count, start <= bytes.count - pattern.count else { return nil }
        for i in start...(bytes.count - pattern.count) where bytes[i] == pattern[0] {
            if bytes[i..<(i + pattern.count)].elementsEqual(pattern) { return i }
        }
        return nil
    }
}
