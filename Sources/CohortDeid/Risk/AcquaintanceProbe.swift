package import CohortCore

/// One participant's ``AcquaintanceProfile`` built from their records as a de-identifier will
/// publish them (its ``Deidentifier/publishedStartAndSource(_:of:)``), and — when asked — the
/// profile the same records give once every time is published in UTC: the export's k-anonymity
/// pass needs that second profile when its first round generalizes `utc_offset`, and building
/// both from one read spares it a second read and probe of every record (issue 28).
///
/// A record's UTC start is its start at offset 0 when its type's rules place instants without
/// the published offset (``Deidentifier/publishesSameInstantsInUTC(_:)``, an allow-list; the
/// same decision to publish or leave it out, the same source). Records of any other type go
/// through a second probe that publishes in UTC, copied before the first record, so it has seen
/// every record of those types in the order they came, as a UTC pass of its own would have.
package struct AcquaintanceProbe: Sendable {
    package let participant: Participant
    private var probe: Deidentifier
    private var utcProbe: Deidentifier?
    /// The participant's pseudonym and shift in each probe, held here for the whole run of their
    /// records (``Deidentifier/publishedStartAndSource(_:state:)``).
    private var state: Deidentifier.RecordParticipant
    private var utcState: Deidentifier.RecordParticipant?
    /// The profile as the records will be published.
    package private(set) var profile = AcquaintanceProfile()
    /// The profile as the records would be published in UTC (nil unless asked for).
    package private(set) var utcProfile: AcquaintanceProfile?

    /// Probes `participant`'s records through `probe` (a copy whose counts are discarded, e.g.
    /// ``Deidentifier/workerCopy()``, with no participant in progress); `alsoInUTC`: build
    /// ``utcProfile`` too.
    package init(participant: Participant, probe: Deidentifier, alsoInUTC: Bool) {
        self.participant = participant
        self.probe = probe
        state = probe.participantState(for: participant)
        if alsoInUTC {
            var utc = probe
            utc.publishesTimesInUTC = true
            utcState = utc.participantState(for: participant)
            utcProbe = utc
            utcProfile = AcquaintanceProfile()
        }
    }

    /// Where the current kind's records go in ``profile`` and ``utcProfile``, and whether its
    /// type publishes the same instants in UTC: decided when the kind changes, not per record.
    private var kind: RecordKind?
    private var slot = AcquaintanceProfile.KindSlot(kind: "")
    private var utcSlot = AcquaintanceProfile.KindSlot(kind: "")
    private var sameInstantsInUTC = false

    /// Adds one record of the participant (every record consent covers, in the order of their
    /// kind: ``Deidentifier`` tracks dense series per kind).
    package mutating func add(_ record: Record) {
        if record.kind != kind {
            kind = record.kind
            slot = .init(kind: record.kind.rawValue)
            utcSlot = slot
            sameInstantsInUTC = probe.publishesSameInstantsInUTC(record.kind.dataType)
        }
        let row = probe.publishedStartAndSource(record, state: &state)
        if let row, let start = row.start {
            profile.add(&slot, startMs: start.epochMilliseconds, offsetSeconds: start.utcOffsetSeconds, source: row.source)
        }
        guard utcProfile != nil else { return }
        if sameInstantsInUTC {
            if let row, let start = row.start { utcProfile?.add(&utcSlot, startMs: start.epochMilliseconds, offsetSeconds: 0, source: row.source) }
        } else if utcState != nil, let utc = utcProbe?.publishedStartAndSource(record, state: &utcState!), let start = utc.start {
            utcProfile?.add(&utcSlot, startMs: start.epochMilliseconds, offsetSeconds: start.utcOffsetSeconds, source: utc.source)
        }
    }
}
