import CohortCore
import CohortImport
import CohortStore

/// Decides, sample by sample, what of one participant's Apple Health export is stored, and
/// counts per type why the rest is not. The period and consent checks are the participant's
/// ``RecordWindow`` — the same that ``RecordValidator`` applies to every row of a CSV or NDJSON
/// import — in the same order (period, value, consent).
///
/// Records are queued per type (exports come grouped by type), so the inserter's count before
/// and after a flush tells each type's new rows from its duplicates.
final class AppleHealthSampleScreen {
    /// The participant whose export this is.
    let participant: StoredParticipant
    let code: String
    /// The kinds the protocol collects.
    let collected: Set<RecordKind>
    let window: RecordWindow
    /// What happened to the samples of each type so far.
    private(set) var counts: [String: AppleHealthImportSummary.TypeCounts] = [:]
    private var pendingType: String?
    private var pendingAccepted = 0
    private var insertedBefore = 0

    init(participant: StoredParticipant, code: String, collected: Set<RecordKind>, window: RecordWindow) {
        self.participant = participant
        self.code = code
        self.collected = collected
        self.window = window
    }

    /// Counts `sample` and adds its record to `inserter` when it is stored.
    func take(_ sample: AppleHealthSample, into inserter: any RecordSink) throws {
        if counts[sample.type] == nil {
            counts[sample.type] = .init(type: sample.type, kind: sample.kind?.rawValue)
        }
        counts[sample.type]?.seen += 1
        guard let (kind, value) = screen(sample) else { return }
        if pendingType != sample.type { try settle(inserter) }
        pendingType = sample.type
        pendingAccepted += 1
        try inserter.add(
            Record(
                participantID: participant.participant.id, kind: kind, start: sample.start, end: sample.end, value: value, text: sample.text,
                source: sample.source, note: sample.metadata),
            participant: participant.handle)
    }

    /// The kind and value to store for `sample`, or nil after counting why it is not stored.
    private func screen(_ sample: AppleHealthSample) -> (RecordKind, Double)? {
        switch sample.outcome {
        case .notCollected: counts[sample.type]?.notCollected += 1; return nil
        case .unitRefused: counts[sample.type]?.unitRefused += 1; return nil
        case .valueRefused: counts[sample.type]?.valueRefused += 1; return nil
        case .mapped: break
        }
        guard let kind = sample.kind, collected.contains(kind) else {
            counts[sample.type]?.notCollected += 1
            return nil
        }
        guard window.periodRefusal(sample.start.epochMilliseconds) == nil else {
            counts[sample.type]?.outsideStudyPeriod += 1
            return nil
        }
        guard let value = sample.value, kind.range.contains(value), !kind.isInteger || value.rounded() == value else {
            counts[sample.type]?.valueRefused += 1
            return nil
        }
        guard window.consentRefusal(at: sample.start, code: code) == nil else {
            counts[sample.type]?.notConsented += 1
            return nil
        }
        return (kind, value)
    }

    /// Flushes the queued type's records and counts which were new and which duplicates.
    func settle(_ inserter: any RecordSink) throws {
        guard let type = pendingType else { return }
        try inserter.flush()
        let inserted = inserter.insertedCount - insertedBefore
        counts[type]?.imported += inserted
        counts[type]?.duplicates += pendingAccepted - inserted
        insertedBefore = inserter.insertedCount
        pendingAccepted = 0
        pendingType = nil
    }

    /// The import batch's totals: seen, imported, duplicates and the rest (not stored).
    var totals: (total: Int, inserted: Int, duplicates: Int, rejected: Int) {
        let total = counts.values.reduce(into: (seen: 0, imported: 0, duplicates: 0)) { t, c in
            t.seen += c.seen
            t.imported += c.imported
            t.duplicates += c.duplicates
        }
        return (total.seen, total.imported, total.duplicates, total.seen - total.imported - total.duplicates)
    }
}
