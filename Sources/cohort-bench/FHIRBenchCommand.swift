import ArgumentParser
import CohortCore
import CohortKit
import Foundation
import CohortImport

extension CohortBench {
    /// `cohort-bench fhir`: a FHIR R4 Bulk Data NDJSON folder of realistic shape for a generated
    /// roster, imported through the real FHIR importer in a child process — records/s and peak RSS.
    struct FHIR: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "fhir",
            abstract: "Measure the FHIR Bulk NDJSON import on a generated export (Patient + Observation).",
            discussion: """
                Writes Patient.ndjson and Observation.ndjson as a Bulk Data export does: one Patient per participant \
                (identifier matched through a user map), Observations with LOINC codes — heart rate, resting heart \
                rate, HRV SDNN, daily steps, sleep duration (the demo protocol collects these), SpO2 (not collected:
                counted) and blood-pressure panels with systolic/diastolic components (no cohort kind: counted). \
                --size S writes 10,000 Observations (for tests), M 200,000, L 1,100,000. The import runs in a child \
                process so its peak RSS is its own.

                Examples:
                  swift run -c release cohort-bench fhir --size L --dir /tmp/fhirbench
                """)

        @Option(help: "S (10k Observations), M (200k) or L (1.1M).") var size: String = "S"
        @Option(help: "Folder for the NDJSON and the workspace (replaced if it holds a previous run).") var dir: String = "cohort-bench-data/fhir"
        @Flag(help: "Print JSON.") var json = false
        @Option(help: .hidden) var importOnly: String?

        /// Participants and Observations per participant for a size.
        static func shape(_ size: String) -> (participants: Int, perParticipant: Int)? {
            switch size.uppercased() {
            case "S": (10, 1_000)
            case "M": (50, 4_000)
            case "L": (200, 5_500)
            default: nil
            }
        }

        func validate() throws {
            guard Self.shape(size) != nil else { throw ValidationError("--size must be S, M or L") }
        }

        func run() throws {
            let base = URL(fileURLWithPath: dir, isDirectory: true)
            if let importOnly {
                // The child process: import and print one JSON line.
                let workspace = try Workspace.open(at: base.appendingPathComponent("ws"), actor: "bench", now: { AppleHealth.now })
                let clock = ContinuousClock()
                let start = clock.now
                let result = try ExternalImporter(workspace: workspace, userMap: base.appendingPathComponent("users.csv")).run(.fhir(URL(fileURLWithPath: importOnly)))
                let seconds = (clock.now - start) / .seconds(1)
                let line: [String: Double] = [
                    "seconds": seconds, "resources": Double(result.tally.seen), "records": Double(result.tally.records),
                    "inserted": Double(result.inserted), "peak_rss": Double(PeakMemory.bytes()),
                ]
                print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
                return
            }
            guard let shape = Self.shape(size) else { throw ValidationError("--size must be S, M or L") }
            let fm = FileManager.default
            try ImportBenchChild.freshFolder(base, bench: "fhir")
            let bulk = base.appendingPathComponent("bulk")
            try fm.createDirectory(at: bulk, withIntermediateDirectories: true)
            let generator = FHIRBulkGenerator(participants: shape.participants, observationsPerParticipant: shape.perParticipant)
            let observations = try generator.write(to: bulk)
            var map = "user_id,participant\n"
            for i in 1...shape.participants { map += "\(FHIRBulkGenerator.identifier(i)),\(FHIRBulkGenerator.code(i))\n" }
            try Data(map.utf8).write(to: base.appendingPathComponent("users.csv"))
            let bytes = (try fm.attributesOfItem(atPath: bulk.appendingPathComponent("Observation.ndjson").path)[.size] as? NSNumber)?.intValue ?? 0

            try ImportBenchChild.consentedWorkspace(at: base.appendingPathComponent("ws"), participants: shape.participants)

            let (result, seconds) = try ImportBenchChild.run(["fhir", "--dir", base.path, "--import-only", bulk.path])
            let records = Int(result["records"] ?? 0)
            let inserted = Int(result["inserted"] ?? 0)
            let rss = Int(result["peak_rss"] ?? 0)
            let report: [String: Any] = [
                "size": size.uppercased(), "participants": shape.participants, "observations_written": observations, "observation_ndjson_bytes": bytes,
                "seconds": seconds, "resources_seen": Int(result["resources"] ?? 0), "records_read": records, "records_inserted": inserted,
                "observations_per_second": Int(Double(observations) / max(seconds, 1e-9)), "records_per_second": Int(Double(inserted) / max(seconds, 1e-9)),
                "peak_rss_bytes": rss, "peak_rss_target_bytes": 100 << 20,
            ]
            if json {
                print(String(decoding: try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self))
            } else {
                print("FHIR Bulk NDJSON import: \(shape.participants) Patients, \(observations) Observations, \(bytes >> 20) MiB Observation.ndjson")
                print(String(format: "  cohort: %.1f s, %d Observations/s, %d records/s (%d stored), peak RSS %.1f MiB (target ≤ 100 MiB)", seconds,
                    Int(Double(observations) / max(seconds, 1e-9)), Int(Double(inserted) / max(seconds, 1e-9)), inserted, Double(rss) / 1_048_576))
            }
        }
    }
}

/// Writes a synthetic FHIR R4 Bulk Data export (Patient.ndjson, Observation.ndjson) shaped like a
/// hospital's: vital-sign categories, LOINC codings with displays, UCUM quantities, device
/// displays, effectiveDateTime or effectivePeriod, blood-pressure components. Streamed through a
/// 1 MiB buffer. Deterministic.
struct FHIRBulkGenerator {
    var participants: Int
    var observationsPerParticipant: Int

    /// The study code of participant `i` (1-based).
    static func code(_ i: Int) -> String { String(format: "P-%04d", i) }
    /// The hospital identifier of participant `i`, listed in the bench's user map.
    static func identifier(_ i: Int) -> String { "BENCH-\(100_000 + i)" }

    /// The LOINC codes the demo protocol collects (heart rate, resting HR, HRV, steps, sleep).
    static let collectedCodes: Set<String> = ["8867-4", "40443-4", "80404-7", "41950-7", "93832-4"]

    /// Writes both files; returns the number of Observations.
    func write(to folder: URL) throws -> Int {
        var patients = ""
        for i in 1...participants {
            patients += """
                {"resourceType":"Patient","id":"pt-\(i)","identifier":[{"system":"urn:oid:2.16.840.1.113883.19.5","value":"\(Self.identifier(i))"}],\
                "active":true,"gender":"\(i % 2 == 0 ? "female" : "male")"}

                """
        }
        try Data(patients.utf8).write(to: folder.appendingPathComponent("Patient.ndjson"))
        let url = folder.appendingPathComponent("Observation.ndjson")
        guard FileManager.default.createFile(atPath: url.path, contents: nil), let handle = FileHandle(forWritingAtPath: url.path) else {
            throw CohortError(.system, "cannot write Observation.ndjson", at: .init(file: url.path))
        }
        defer { try? handle.close() }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 20)
        func put(_ text: String) throws {
            buffer.append(contentsOf: text.utf8)
            if buffer.count >= 1 << 20 {
                try handle.write(contentsOf: buffer)
                buffer.removeAll(keepingCapacity: true)
            }
        }
        let category = #""category":[{"coding":[{"system":"http://terminology.hl7.org/CodeSystem/observation-category","code":"vital-signs","display":"Vital Signs"}]}]"#
        // 2026-01-02 00:00 +01:00, spread over 85 days (inside the 90-day study period).
        let base = Int64(1_767_308_400)
        func stamp(_ seconds: Int64) -> String {
            let local = base + seconds + 3600
            let day = CivilDate(daysSinceEpoch: Int(local / 86_400))
            let s = Int(local % 86_400)
            return String(format: "%@T%02d:%02d:%02d+01:00", day.description, s / 3600, s / 60 % 60, s % 60)
        }
        func coding(_ code: String, _ display: String) -> String {
            #""code":{"coding":[{"system":"http://loinc.org","code":"\#(code)","display":"\#(display)"}],"text":"\#(display)"}"#
        }
        func quantity(_ value: String, _ unit: String, _ code: String) -> String {
            #""valueQuantity":{"value":\#(value),"unit":"\#(unit)","system":"http://unitsofmeasure.org","code":"\#(code)"}"#
        }
        var random = SeededRandom(seed: 11)
        var written = 0
        let span = Int64(85 * 86_400)
        for p in 1...participants {
            let subject = #""subject":{"reference":"Patient/pt-\#(p)"}"#
            let step = max(Int64(1), span / Int64(observationsPerParticipant))
            for j in 0..<observationsPerParticipant {
                let t = Int64(j) * step
                let id = "\(p)-\(j)"
                let head = #"{"resourceType":"Observation","id":"obs-\#(id)","status":"final",\#(category),"#
                let device = #""device":{"display":"Wrist sensor"}"#
                // Mostly heart rate, as in wearable-fed EHR data; the rest in a fixed rotation.
                switch j % 20 {
                case 0:
                    try put(head + coding("40443-4", "Heart rate --resting") + ",\(subject),\"effectiveDateTime\":\"\(stamp(t))\","
                        + quantity("\(48 + random.next() % 30)", "/min", "/min") + "}\n")
                case 1:
                    try put(head + coding("80404-7", "R-R interval.standard deviation (Heart rate variability)") + ",\(subject),\"effectiveDateTime\":\"\(stamp(t))\","
                        + quantity("0.0\(20 + random.next() % 70)", "s", "s") + ",\(device)}\n")
                case 2:
                    try put(head + coding("41950-7", "Number of steps in 24 hour Measured") + ",\(subject),\"effectivePeriod\":{\"start\":\"\(stamp(t))\",\"end\":\"\(stamp(t + 86_400))\"},"
                        + quantity("\(2_000 + random.next() % 12_000)", "steps/day", "/d") + "}\n")
                case 3:
                    try put(head + coding("93832-4", "Sleep duration") + ",\(subject),\"effectivePeriod\":{\"start\":\"\(stamp(t))\",\"end\":\"\(stamp(t + 25_200))\"},"
                        + quantity("\(300 + random.next() % 180)", "min", "min") + "}\n")
                case 4:
                    try put(head + coding("59408-5", "Oxygen saturation in Arterial blood by Pulse oximetry") + ",\(subject),\"effectiveDateTime\":\"\(stamp(t))\","
                        + quantity("\(93 + random.next() % 7)", "%", "%") + ",\(device)}\n")
                case 5:
                    try put(head + coding("85354-9", "Blood pressure panel with all children optional") + ",\(subject),\"effectiveDateTime\":\"\(stamp(t))\",\"component\":[{"
                        + coding("8480-6", "Systolic blood pressure") + "," + quantity("\(105 + random.next() % 40)", "mm[Hg]", "mm[Hg]") + "},{"
                        + coding("8462-4", "Diastolic blood pressure") + "," + quantity("\(65 + random.next() % 25)", "mm[Hg]", "mm[Hg]") + "}]}\n")
                default:
                    try put(head + coding("8867-4", "Heart rate") + ",\(subject),\"effectiveDateTime\":\"\(stamp(t))\","
                        + quantity("\(55 + random.next() % 70)", "beats/minute", "/min") + ",\(device)}\n")
                }
                written += 1
            }
        }
        try handle.write(contentsOf: buffer)
        return written
    }
}
