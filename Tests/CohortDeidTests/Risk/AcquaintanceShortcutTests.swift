import CohortCore
import Testing

@testable import CohortDeid

/// The k-anonymity pass's per-record shortcuts (issue 28) against the plain route they replace:
/// an ``AcquaintanceProfile/KindSlot`` remembers a kind's entry and its last device class, and a
/// ``Deidentifier`` remembers the last source it generalized per participant and type, and the
/// texts it scrubbed. Each must give exactly what the plain route gives, whatever order kinds,
/// types and sources come in.
struct AcquaintanceShortcutTests {
    static let created = Timestamp(epochMilliseconds: 1_740_830_400_000)  // 2025-03-01T12:00:00Z
    static let kinds: [RecordKind] = [.pain, .fatigue, .heartRate, .steps, .medicationDose]
    /// Sources that repeat, differ by one byte or by case, are empty, and canonically equivalent
    /// texts in two encodings.
    static let sources: [String?] = [
        "Apple Watch", "Apple Watch", "apple watch", "Garmin Venu", "Watch6,2", "", nil, "Caf\u{E9} app", "Cafe\u{301} app",
        "A longer device name than fifteen bytes",
    ]

    /// A worker's de-identifier of the planted roster under `fields`.
    static func deidentifier(_ fields: [String: FieldRule]) throws -> Deidentifier {
        try Deidentifier(
            studyProtocol: Fixtures.studyProtocol(fields: fields), recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key,
            roster: PlantedRoster.participants, referenceDate: created.localDate, createdAt: created
        ).workerCopy()
    }

    /// A profile built through slots (a fresh slot per run of one kind, as ``AcquaintanceProbe``
    /// does; runs of one record when the kinds interleave) equals the one built record by record
    /// through ``AcquaintanceProfile/add(kind:startMs:offsetSeconds:source:)``.
    @Test(arguments: [false, true]) func slotsBuildThePlainProfile(_ interleaved: Bool) {
        var rng = SeededRandom(seed: interleaved ? 2_817 : 2_818)
        var plain = AcquaintanceProfile()
        var slotted = AcquaintanceProfile()
        var slot = AcquaintanceProfile.KindSlot(kind: "")
        var current: RecordKind?
        var kind = Self.kinds[0]
        for _ in 0..<2_000 {
            if interleaved || rng.next() % 40 == 0 { kind = Self.kinds[Int(rng.next() % UInt64(Self.kinds.count))] }
            let source = Self.sources[Int(rng.next() % UInt64(Self.sources.count))]
            let start = 1_730_100_000_000 + Int64(rng.next() % 200) * 86_400_000 + Int64(rng.next() % 86_400_000)
            let offset = Int32([-18_000, 0, 3_600][Int(rng.next() % 3)])
            plain.add(kind: kind.rawValue, startMs: start, offsetSeconds: offset, source: source)
            if kind != current {
                current = kind
                slot = .init(kind: kind.rawValue)
            }
            slotted.add(&slot, startMs: start, offsetSeconds: offset, source: source)
        }
        #expect(slotted == plain)
        #expect(slotted.values(weekdayKept: true) == plain.values(weekdayKept: true))
    }

    /// A de-identifier that remembers its last generalized source publishes, for every record,
    /// the source a fresh copy (nothing remembered) publishes — in ``Deidentifier/record(_:of:)``
    /// and ``Deidentifier/publishedStartAndSource(_:of:)`` — with rules that differ per type, so a
    /// source remembered for one type would be wrong for another.
    @Test func rememberedSourcesArePublishedAsAFreshDeidentifierPublishesThem() throws {
        var fields = Fixtures.allFields
        fields["biometric.source"] = FieldRule(.generalize, map: ["Apple Watch": "wrist", "Garmin Venu": "wrist"], other: "device")
        fields["medication_log.source"] = FieldRule(.keep)
        let deid = try Self.deidentifier(fields)
        var rng = SeededRandom(seed: 2_819)
        var writer = deid
        var probe = deid
        var published = Set<String?>()
        for p in PlantedRoster.participants {
            var t: Int64 = 1_730_100_000_000
            for _ in 0..<300 {
                t += Int64(rng.next() % 90) * 60_000
                let kind = Self.kinds[Int(rng.next() % UInt64(Self.kinds.count))]
                let source = Self.sources[Int(rng.next() % UInt64(Self.sources.count))]
                let record = Record(participantID: p.id, kind: kind, start: Timestamp(epochMilliseconds: t, utcOffsetSeconds: -18_000), value: 1, source: source)
                var fresh = deid
                let expected = fresh.record(record, of: p)
                #expect(expected != nil)
                let row = writer.record(record, of: p)
                #expect(row?.source == expected?.source && row?.source?.utf8.elementsEqual(expected?.source?.utf8 ?? "".utf8) ?? true)
                var freshProbe = deid
                let probed = probe.publishedStartAndSource(record, of: p)
                #expect(probed?.source == freshProbe.publishedStartAndSource(record, of: p)?.source)
                #expect(probed?.source == expected?.source)
                published.insert(expected?.source)
            }
        }
        // The rules publish different things, so a source taken from the wrong type would show.
        #expect(published.isSuperset(of: ["smartwatch", "wrist", "device", "other", "Apple Watch", "apple watch"]))
    }

    /// Texts that repeat, hold roster identifiers and a date (shifted per participant), differ by
    /// one byte, are canonically equivalent in two encodings, or are empty: more than a
    /// participant's remembered texts, so some are forgotten and scrubbed again.
    static let texts: [String?] = [
        "naproxen", "naproxen", "adalimumab", "José's pills", "call (555) 123-4567", "taken 2025-01-03 with José", "naproxen ",
        "Caf\u{E9} app", "Cafe\u{301} app", "", nil, "ask Dr. Smith", "A1234567 refill", "methotrexate", "sulfasalazine", "taken 3/14/1980",
    ]

    /// A de-identifier that remembers the texts it scrubbed publishes every record's text and
    /// source as a fresh copy (nothing remembered) does, and counts in its report what the fresh
    /// copies count together, with `scrub` on a type's text and on another type's source.
    @Test func rememberedScrubbedTextsArePublishedAndCountedAsScrubbingAgain() throws {
        var fields = Fixtures.allFields
        fields["medication_log.text"] = FieldRule(.scrub)
        fields["biometric.source"] = FieldRule(.scrub)
        let deid = try Self.deidentifier(fields)
        var rng = SeededRandom(seed: 2_820)
        var writer = deid
        var separately = ScrubCounts()
        var published = Set<String>()
        for p in PlantedRoster.participants {
            var t: Int64 = 1_730_100_000_000
            for _ in 0..<200 {
                t += Int64(rng.next() % 90) * 60_000
                let kind: RecordKind = [.medicationDose, .heartRate, .pain][Int(rng.next() % 3)]
                let text = Self.texts[Int(rng.next() % UInt64(Self.texts.count))]
                let record = Record(
                    participantID: p.id, kind: kind, start: Timestamp(epochMilliseconds: t, utcOffsetSeconds: -18_000), value: 1,
                    text: kind == .medicationDose ? text : nil, source: kind == .heartRate ? text : nil)
                var fresh = deid
                let expected = fresh.record(record, of: p)
                separately.merge(fresh.stats.scrubTokens)
                let row = writer.record(record, of: p)
                #expect(row?.text == expected?.text && row?.text?.utf8.elementsEqual(expected?.text?.utf8 ?? "".utf8) ?? true)
                #expect(row?.source == expected?.source && row?.source?.utf8.elementsEqual(expected?.source?.utf8 ?? "".utf8) ?? true)
                if let text = expected?.text { published.insert(text) }
            }
        }
        #expect(writer.stats.scrubTokens == separately)
        // Identifiers were found, and the dated text was published differently per participant.
        #expect(separately.total > 100)
        #expect(published.filter { $0.hasPrefix("taken ") }.count > 2)
    }
}
