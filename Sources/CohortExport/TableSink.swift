import CohortCore

/// What flows from the export's reader to its writers, in order (``ExportBatch``).
enum ExportEvent: Sendable {
    /// A participant starts: their row, and their consents (sorted by signing time).
    case participant(DeidentifiedParticipant, [DeidentifiedConsent])
    /// The batch's records at these indexes (``ExportBatch/records``), in order.
    case records(Range<Int>)
    /// A participant's overlap-free daily total of a cumulative kind, after their records:
    /// `start` is the local midnight, `end` the next, `value` the total (FHIR only; the tables
    /// write `daily_totals` themselves).
    case dailyTotal(DeidentifiedRecord)
}

/// A batch of events for the export's writers, its records in an array of their own: a writer
/// reads a record in place (`records[i]`), where taking it out of an enum case copied it — a
/// retain of each of its strings, and their releases after (issue 28, ninth round: about 1.8 %
/// of the CSV + JSON export's CPU, on the table worker).
struct ExportBatch: Sendable {
    private(set) var events: [ExportEvent] = []
    private(set) var records: [DeidentifiedRecord] = []

    /// Participants, records and daily totals appended.
    var count: Int { events.count + records.count }

    mutating func append(_ event: ExportEvent) { events.append(event) }

    /// Appends `record` to the run of records at the end, or starts one.
    mutating func append(record: consuming DeidentifiedRecord) {
        if case .records(let run)? = events.last, run.upperBound == records.count {
            events[events.count - 1] = .records(run.lowerBound..<(run.upperBound + 1))
        } else {
            events.append(.records(records.count..<(records.count + 1)))
        }
        records.append(record)
    }

    /// Empties the batch, its buffers' capacity kept.
    mutating func removeAll() {
        events.removeAll(keepingCapacity: true)
        records.removeAll(keepingCapacity: true)
    }
}

/// The CSV and NDJSON tables of an export, fed batches of events.
///
/// Used by one thread at a time: the export's table worker runs the jobs that touch it (see
/// ``SerialWorker``), and the export writer reads the tables again only after that worker has
/// finished; it is never shared, so it need not be `Sendable`.
final class TableSink {
    private let participants: TableWriter
    private let consents: TableWriter
    /// The record tables, kept alive here for ``familyWriters``.
    private let families: [TableWriter]
    /// Each data type's table (`DataType.caseIndex`), unretained: a record's writer is found by
    /// its type's index and called without the retain and release per record that taking a
    /// reference out of an array costs (issue 28, seventeenth round); `families` holds them.
    private let familyWriters: [Unmanaged<TableWriter>?]

    init(participants: TableWriter, consents: TableWriter, families: [DataType: TableWriter]) {
        self.participants = participants
        self.consents = consents
        self.families = Array(families.values)
        familyWriters = DataType.allCases.map { type in families[type].map { Unmanaged.passUnretained($0) } }
    }

    func consume(_ batch: ExportBatch) throws {
        for event in batch.events {
            switch event {
            case .participant(let p, let ordered):
                try participants.write(participants.layout.row(p))
                for consent in ordered { try consents.write(consents.layout.row(consent)) }
            case .records(let run):
                // Each record is read in place (``TableWriter/write(record:)``): a read of an
                // array element passed on copied the whole record, a retain of each of its
                // strings and their releases after (issue 28, seventeenth round).
                try batch.records.withUnsafeBufferPointer { records in
                    guard let first = records.baseAddress else { return }
                    for index in run {
                        let record = first + index
                        if let family = familyWriters[record.pointee.kind.dataType.caseIndex] {
                            try family._withUnsafeGuaranteedRef { try $0.write(record: record) }
                        }
                    }
                }
            case .dailyTotal:
                break
            }
        }
    }
}
