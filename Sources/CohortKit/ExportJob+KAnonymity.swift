import CohortCompliance
import CohortCore
import CohortDeid
import CohortIO
import CohortPackage
import CohortStore
import Foundation
import Synchronization

extension ExportJob {
    /// Makes the export's participant rows k-anonymous under `policy` (nothing when it asks for
    /// no k): generalizes and suppresses in `rows`, and leaves out of `included` and `rows` the
    /// participants suppressed entirely (their consents and records go with them), counting them
    /// in `exclusions`. Returns what was achieved, for the report and the manifest.
    static func applyKAnonymity(
        policy: DeidentificationPolicy, included: inout [StoredParticipant], rows: inout [DeidentifiedParticipant],
        exclusions: inout [String: Int], recordAttributes: (names: [String], values: [[String]])? = nil, timesInUTC: Bool = false
    ) throws -> KAnonymitySummary? {
        guard let anonymizer = try KAnonymizer(policy: policy) else { return nil }
        let result = anonymizer.apply(
            rows, recordAttributes: recordAttributes, enforceRecordAttributes: policy.kAnonymity?.enforceRecordAttributes ?? false,
            fixedLevels: timesInUTC ? [.utcOffset: QuasiIdentifier.utcOffset.maxLevel] : [:])
        // The kept rows are the input rows in input order less the suppressed ones: walk both,
        // and take the anonymizer's rows as they are once every pseudonym is where it should be.
        var keptParticipants: [StoredParticipant] = []
        keptParticipants.reserveCapacity(result.participants.count)
        var next = result.participants.startIndex
        for (stored, row) in zip(included, rows) {
            if result.suppressedPseudonyms.contains(row.pseudonym) {
                exclusions["suppressed for k-anonymity", default: 0] += 1
                continue
            }
            guard next < result.participants.endIndex, result.participants[next].pseudonym == row.pseudonym else {
                throw Self.kAnonymityOrderError
            }
            keptParticipants.append(stored)
            next += 1
        }
        guard next == result.participants.endIndex else { throw Self.kAnonymityOrderError }
        included = keptParticipants
        rows = result.participants
        return result.summary
    }

    /// What an acquaintance can know from each included participant's records, as they will be
    /// published (``AcquaintanceProfile``), in `cohort.included` order, and — `alsoInUTC` — as
    /// they would be published with every time in UTC (the second round of ``kAnonymize(_:policy:)``
    /// once the first generalizes `utc_offset`; ``AcquaintanceProbe`` builds both from one read).
    /// Nil when the policy asks for no k. Reads every included participant's records once more,
    /// through a copy of the de-identifier per participant (its counts are discarded; no text is
    /// scrubbed) and the same consent decisions as the write.
    ///
    /// Participants are profiled on up to `options.threads` threads. Each reads its records
    /// through its own store reader (``StudyStore/withRecordReaders(_:_:)``; on SQLite its own
    /// read-only connection, so the threads read at once, as ``RecordWorkers`` do), and only the
    /// fields the probe reads (``StudyStore/forEachRecordStartAndSource(_:participantID:_:)``:
    /// ``Deidentifier/startAndSourceFields(of:)`` of each record; no value, text or note is read
    /// or decrypted), kind by kind in the store's index order (no sort), not by start as the write
    /// reads them: a record's published start depends only on the earlier records of its kind,
    /// which come in the same order either way (DeidentifierTests proves the two orders publish
    /// the same). A profile depends only on its participant's records and the de-identifier's
    /// keys (a fresh ``Deidentifier/workerCopy()`` per participant), and the profiles come back
    /// in `cohort.included` order, so they are the same whatever the thread count.
    func recordProfiles(_ cohort: DeidentifiedCohort, policy: DeidentificationPolicy, alsoInUTC: Bool) throws -> RecordProfiles? {
        guard policy.kAnonymity != nil else { return nil }
        let workspace = workspace
        let deid = cohort.deid
        let coverage = cohort.coverage
        // Participants are handed out to threads one at a time: a thread takes a free reader and
        // record buffer, and gives them back. A reader with a connection of its own is profiled
        // as its rows come (memory does not grow with a participant's records); one that reads
        // through the store's one connection is read whole first, into the buffer (which keeps
        // its capacity from one participant to the next), so the probe runs outside the read.
        let probes = try workspace.store.withRecordReaders(options.threads) { readers in
            let spare = Mutex(readers.map { (reader: $0, records: [Record]()) })
            return try Parallel.map(cohort.included, threads: readers.count) { stored in
                let participant = stored.participant
                guard var slot = spare.withLock({ $0.popLast() }) else { throw Self.readersExhausted }
                defer { spare.withLock { $0.append(slot) } }
                var profile = ProfileBuilder(
                    coverage: coverage[participant.id], probe: AcquaintanceProbe(participant: participant, probe: deid.workerCopy(), alsoInUTC: alsoInUTC))
                if slot.reader.hasOwnConnection {
                    try slot.reader.forEachRecordStartAndSource(stored.handle, participantID: participant.id) { profile.add($0) }
                } else {
                    slot.records.removeAll(keepingCapacity: true)
                    try slot.reader.forEachRecordStartAndSource(stored.handle, participantID: participant.id) { slot.records.append($0) }
                    for record in slot.records { profile.add(record) }
                }
                // The profiles only: the probe's de-identifier copies (their counts, the
                // participant's shift) would otherwise stay alive for every participant.
                return (profile.probe.profile.trimmed(), profile.probe.utcProfile?.trimmed())
            }
        }
        return RecordProfiles(asPublished: probes.map(\.0), inUTC: alsoInUTC ? probes.map { $0.1 ?? AcquaintanceProfile() } : nil)
    }

    /// The record attributes k-anonymity counts (names, one value list per included participant)
    /// from `profiles` (``recordProfiles(_:policy:alsoInUTC:)``, one per included participant, as
    /// the records will be published). With `record_attributes: enforce` (the default) the
    /// records are generalized first (``RecordAttributeGeneralizer``): the kinds each participant
    /// loses go into `cohort.leftOutKinds` (left out at write) and, when every source must go,
    /// the de-identifier publishes none.
    func recordAttributes(_ cohort: inout DeidentifiedCohort, policy: DeidentificationPolicy, profiles: [AcquaintanceProfile]?)
        -> (names: [String], values: [[String]], generalization: RecordAttributeGeneralization?)?
    {
        guard let settings = policy.kAnonymity, let profiles else { return nil }
        let weekdayKept = policy.dateShift.maxDays == 0 || policy.dateShift.wholeWeeks
        let names = AcquaintanceProfile.attributes(weekdayKept: weekdayKept)
        guard settings.enforceRecordAttributes else { return (names, profiles.map { $0.values(weekdayKept: weekdayKept) }, nil) }
        let generalization = RecordAttributeGeneralizer.generalize(profiles, k: settings.k, weekdayKept: weekdayKept)
        for (stored, kinds) in zip(cohort.included, generalization.leftOutKinds) where !kinds.isEmpty {
            cohort.leftOutKinds[stored.participant.id] = kinds
        }
        if !generalization.sourcesPublished { cohort.deid.publishesSources = false }
        return (names, generalization.values, generalization)
    }

    /// A profiling thread found no free store reader (there is one per thread).
    private static var readersExhausted: CohortError {
        CohortError(
            .integrity, "the export's k-anonymity pass ran more threads than it has store readers; nothing was published",
            hint: "this is a bug in cohort: run the export again with --threads 1 and report it")
    }

    /// k-anonymization returned rows that are not the input rows in order (less the suppressed).
    private static var kAnonymityOrderError: CohortError {
        CohortError(
            .integrity, "k-anonymization returned participant rows out of step with the export's participants",
            at: .init(field: "deidentification.k_anonymity"),
            hint: "this is a bug in cohort: nothing was published; report it with the protocol's deidentification section")
    }
}

extension ExportManifest.KAnonymity {
    /// The manifest's statement of a k-anonymity summary (sensitive fields as `table.column`).
    init(_ summary: KAnonymitySummary) {
        self.init(
            requestedK: summary.requestedK, achievedK: summary.achievedK, quasiIdentifiers: summary.quasiIdentifiers,
            classes: summary.classes, generalized: summary.generalized, suppressedValues: summary.suppressedValues,
            suppressedParticipants: summary.suppressedParticipants, sensitive: summary.sensitive?.map { "\($0.table).\($0.column)" })
        recordQuasiIdentifiers = summary.recordQuasiIdentifiers
        recordAchievedK = summary.recordAchievedK
        recordAttributesEnforced = summary.recordAttributesEnforced
    }
}

/// The k-anonymity pass's profiles of the included participants (``ExportJob/recordProfiles(_:policy:alsoInUTC:)``).
struct RecordProfiles {
    /// As the records will be published.
    var asPublished: [AcquaintanceProfile]
    /// As they would be published with every time in UTC (nil unless asked for).
    var inUTC: [AcquaintanceProfile]?
}

/// One participant's ``AcquaintanceProbe``, fed every record consent covers.
private struct ProfileBuilder {
    let coverage: ConsentCoverage?
    var probe: AcquaintanceProbe

    mutating func add(_ record: Record) {
        if coverage?.refusal(for: record.kind.dataType, atMilliseconds: record.start.epochMilliseconds) != nil { return }
        probe.add(record)
    }
}
