import CohortCore

/// What flows from the export's reader to its writers, in order.
enum ExportEvent: Sendable {
    /// A participant starts: their row, and their consents (sorted by signing time).
    case participant(DeidentifiedParticipant, [DeidentifiedConsent])
    case record(DeidentifiedRecord)
    /// A participant's overlap-free daily total of a cumulative kind, after their records:
    /// `start` is the local midnight, `end` the next, `value` the total (FHIR only; the tables
    /// write `daily_totals` themselves).
    case dailyTotal(DeidentifiedRecord)
}

/// The CSV and NDJSON tables of an export, fed batches of events.
///
/// Used by one thread at a time: the export's table worker runs the jobs that touch it (see
/// ``SerialWorker``), and the export writer reads the tables again only after that worker has
/// finished; it is never shared, so it need not be `Sendable`.
final class TableSink {
    private let participants: TableWriter
    private let consents: TableWriter
    /// The record tables, found by a scan of the few families (no hashing per record).
    private let families: [(type: DataType, writer: TableWriter)]

    init(participants: TableWriter, consents: TableWriter, families: [DataType: TableWriter]) {
        self.participants = participants
        self.consents = consents
        self.families = families.sorted { $0.key < $1.key }.map { (type: $0.key, writer: $0.value) }
    }

    func consume(_ events: [ExportEvent]) throws {
        for event in events {
            switch event {
            case .participant(let p, let ordered):
                try participants.write(participants.layout.row(p))
                for consent in ordered { try consents.write(consents.layout.row(consent)) }
            case .record(let r):
                let type = r.kind.dataType
                if let family = families.first(where: { $0.type == type }) { try family.writer.write(r) }
            case .dailyTotal:
                break
            }
        }
    }
}
