import CohortCore
import CohortCrypto
import Foundation
import Testing

@testable import CohortDeid

struct DeidentificationReportTests {
    @Test func reportCarriesCountsAndNoSecrets() throws {
        let roster = PlantedRoster.participants
        let studyProtocol = Fixtures.studyProtocol(kAnonymity: .init(k: 2, quasiIdentifiers: ["participant.birth_date", "participant.sex"]))
        var deid = try Deidentifier(
            studyProtocol: studyProtocol, recipient: "analyst", recipientKey: Fixtures.key, shiftKey: Fixtures.key, roster: roster,
            referenceDate: Fixtures.date("2025-06-01"))
        let participants = roster.map { deid.participant($0) }
        for p in roster {
            _ = deid.record(
                Record(participantID: p.id, kind: .pain, start: Timestamp(epochMilliseconds: 1_741_940_000_000), value: 3,
                       note: "\(p.identity?.name ?? "") on 03/14/2025"), of: p)
        }
        let anonymizer = try #require(try KAnonymizer(policy: studyProtocol.deidentification))
        let k = anonymizer.apply(participants)
        let scan = ResidualScanResult(filesScanned: 3, findings: [ResidualFinding(file: "data/csv/x.csv", line: 2, kind: .name)])
        let report = try DeidentificationReport(
            studyProtocol: studyProtocol, recipient: "analyst", stats: deid.stats, keyFingerprints: ["study_secret": "ab12"],
            kAnonymity: k.summary, residualScan: scan)

        #expect(report.policySHA256 == SHA256.hex(Array(try CanonicalJSON.encode(studyProtocol.deidentification))))
        #expect(report.participants == 4 && report.records == 4)
        #expect(report.rules.first { $0.field == "symptom_log.note" } == .init(field: "symptom_log.note", transform: .scrub, values: 4))
        #expect(report.rules.first { $0.field == "participant.zip" }?.values == 4)
        #expect(report.scrubTokens == ["NAME": 4, "DATE": 4])
        #expect(report.directIdentifiersRemoved.contains(.init(field: "participant.email", values: 4)))
        #expect(report.kAnonymity?.requestedK == 2)
        #expect(report.residualScan?.findingsCount == 1)

        let json = String(decoding: try CanonicalJSON.encode(report), as: UTF8.self)
        for key in ["\"policy_sha256\"", "\"dropped_unruled\"", "\"direct_identifiers_removed\"", "\"date_shift\":{\"embargo_days\":0,\"left_out_after_creation\":{},\"left_out_exogenous\":{},\"max_days\":180,\"range_days\":[-180,-1],\"recoverable_signals\":[\"holidays are not masked",
                    "\"scope\":\"participant\",\"whole_weeks\":false}",
                    "\"k_anonymity\"", "\"achieved_k\"", "\"scrub_tokens\"", "\"residual_scan\"", "\"files_scanned\":3", "\"key_fingerprints\""] {
            #expect(json.contains(key), "\(key)")
        }
        let folded = PlantedRoster.fold(json)
        for fragment in PlantedRoster.forbiddenFragments where fragment.count >= 3 {
            #expect(!folded.contains(PlantedRoster.fold(fragment)))
        }
        // No date-shift offset: the only "offset" is the name of the published utc_offset column.
        #expect(!json.replacingOccurrences(of: "\"utc_offset\"", with: "").contains("offset"))
        let decoded = try JSONDecoder().decode(DeidentificationReport.self, from: Data(json.utf8))
        #expect(decoded == report)
    }
}
