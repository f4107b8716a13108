import CohortCore
import Testing

@testable import CohortDeid

/// The k-anonymity pass profiles every record once, as published and as it would be published
/// with every time in UTC (``AcquaintanceProbe``). The UTC profile must be exactly what a pass of
/// its own would build through a de-identifier that publishes in UTC — for rules that place an
/// instant without the offset (`shift`, `keep`) and for one that does not (`year`), across a
/// daylight-saving change, with dense series, ends and sources.
struct AcquaintanceProbeTests {
    static let created = Timestamp(epochMilliseconds: 1_740_830_400_000)  // 2025-03-01T12:00:00Z

    static let policies: [(name: String, fields: [String: FieldRule])] = [
        ("shift", Fixtures.allFields),
        ("keep", Fixtures.allFields.merging(["records.start": FieldRule(.keep), "records.end": FieldRule(.keep)]) { $1 }),
        ("year", Fixtures.allFields.merging(["symptom_log.start": FieldRule(.year), "biometric.end": FieldRule(.keep)]) { $1 }),
    ]

    @Test(arguments: 0..<3) func oneReadGivesTheProfileAUTCPassWouldBuild(_ policyIndex: Int) throws {
        let policy = Self.policies[policyIndex]
        var rng = SeededRandom(seed: 2_800 + UInt64(policyIndex))
        var differsFromLocal = 0
        var naiveDiffers = 0
        for p in PlantedRoster.participants {
            let records = Self.records(of: p, using: &rng)
            var probe = AcquaintanceProbe(participant: p, probe: try deidentifier(policy.fields, inUTC: false), alsoInUTC: true)
            var local = AcquaintanceProbe(participant: p, probe: try deidentifier(policy.fields, inUTC: false), alsoInUTC: false)
            var utc = AcquaintanceProbe(participant: p, probe: try deidentifier(policy.fields, inUTC: true), alsoInUTC: false)
            var naive = AcquaintanceProfile()
            var naiveProbe = try deidentifier(policy.fields, inUTC: false)
            for record in records {
                probe.add(record)
                local.add(record)
                utc.add(record)
                // The shortcut for every type (the local start at offset 0), which `year` must not take.
                if let row = naiveProbe.publishedStartAndSource(record, of: p), let start = row.start {
                    naive.add(kind: record.kind.rawValue, startMs: start.epochMilliseconds, offsetSeconds: 0, source: row.source)
                }
            }
            #expect(probe.profile == local.profile)
            #expect(probe.profile.trimmed() == probe.profile && probe.utcProfile?.trimmed() == probe.utcProfile)
            #expect(probe.utcProfile == utc.profile)
            #expect(local.utcProfile == nil)
            for weekdayKept in [true, false] {
                #expect(probe.utcProfile?.values(weekdayKept: weekdayKept) == utc.profile.values(weekdayKept: weekdayKept))
            }
            if probe.utcProfile != probe.profile { differsFromLocal += 1 }
            if naive != utc.profile { naiveDiffers += 1 }
        }
        // The check can fail: UTC days are not the local ones, and under `year` the shortcut is wrong.
        #expect(differsFromLocal > 0, "the records' UTC profile differs from the local one")
        if policy.name == "year" {
            #expect(naiveDiffers > 0, "a year-anchored start moves with the published offset")
        } else {
            #expect(naiveDiffers == 0, "shift and keep place instants without the offset")
        }
    }

    /// A de-identifier for `fields` (k over record attributes not needed here), publishing in UTC or not.
    private func deidentifier(_ fields: [String: FieldRule], inUTC: Bool) throws -> Deidentifier {
        var deid = try Deidentifier(
            studyProtocol: Fixtures.studyProtocol(fields: fields), recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key,
            roster: PlantedRoster.participants, referenceDate: Self.created.localDate, createdAt: Self.created)
        deid.publishesTimesInUTC = inUTC
        return deid.workerCopy()
    }

    /// Records every 0–29 minutes (dense series) across Chicago's 2024-11-03 change from daylight
    /// time, of symptom, biometric and medication kinds, some with an end and a source, in the
    /// store's index order (kind, start, source).
    private static func records(of p: Participant, using rng: inout SeededRandom) -> [Record] {
        let kinds: [RecordKind] = [.pain, .fatigue, .heartRate, .steps, .medicationDose]
        let sources: [String?] = ["Apple Watch", "Garmin Venu", nil]
        var records: [Record] = []
        var keys = Set<String>()
        var t: Int64 = 1_730_100_000_000  // 2024-10-28T07:20Z
        for _ in 0..<600 {
            t += Int64(rng.next() % 30) * 60_000 + Int64(rng.next() % 3) * 3_600_000 * Int64(rng.next() % 2)
            let kind = kinds[Int(rng.next() % UInt64(kinds.count))]
            let source = sources[Int(rng.next() % UInt64(sources.count))]
            guard keys.insert("\(kind.rawValue)|\(t)|\(source ?? "")").inserted else { continue }
            let end = rng.next() % 3 == 0 ? Timestamp(epochMilliseconds: t + 600_000, utcOffsetSeconds: -18_000) : nil
            records.append(Record(participantID: p.id, kind: kind, start: Timestamp(epochMilliseconds: t, utcOffsetSeconds: -18_000), end: end, source: source))
        }
        return records.sorted {
            ($0.kind.rawValue, $0.start.epochMilliseconds, $0.source ?? "") < ($1.kind.rawValue, $1.start.epochMilliseconds, $1.source ?? "")
        }
    }
}
