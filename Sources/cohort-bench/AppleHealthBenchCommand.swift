import ArgumentParser
import CohortCore
import CohortKit
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension CohortBench {
    /// `cohort-bench applehealth`: an Apple Health export.xml of realistic shape, imported for one
    /// participant — records/s and peak RSS — and, when available, `healthkit-to-sqlite` on the
    /// same file in the same run.
    struct AppleHealth: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "applehealth",
            abstract: "Measure the Apple Health import on a generated export.xml (and compare with healthkit-to-sqlite).",
            discussion: """
                Writes export.xml as the Health app does (internal DTD, Me, Records grouped by type with HKDevice \
                strings and MetadataEntry children, HRV beat lists, sleep stages, workouts with routes), ~330 bytes \
                per sample: --samples 5000000 makes ~1.7 GB. The import runs in a child process so its peak \
                RSS is its own. healthkit-to-sqlite (PyPI, pinned in requirements-interop.txt) is timed on the \
                same file when .venv/bin/healthkit-to-sqlite (or $HEALTHKIT_TO_SQLITE) exists; otherwise the \
                comparison is skipped and says so.

                Examples:
                  swift run -c release cohort-bench applehealth    # 200k samples
                  swift run -c release cohort-bench applehealth --samples 5000000 --dir /tmp/ah
                """)

        @Option(help: "Samples to write.") var samples: Int = 200_000
        @Option(help: "Folder for export.xml and the workspace (replaced if it holds a previous run).") var dir: String = "cohort-bench-data/applehealth"
        @Flag(help: "Skip the healthkit-to-sqlite comparison.") var noCompare = false
        @Flag(help: "Print JSON.") var json = false
        @Option(help: .hidden) var importOnly: String?

        func validate() throws {
            guard (1...100_000_000).contains(samples) else { throw ValidationError("--samples must be between 1 and 100000000") }
        }

        static let enrolled = "2026-01-01"
        static let now = Date(timeIntervalSince1970: 1_798_761_600)  // 2027-01-01T00:00:00Z

        func run() throws {
            let base = URL(fileURLWithPath: dir, isDirectory: true)
            if let importOnly {
                // The child process: import and print one JSON line.
                let workspace = try Workspace.open(at: base.appendingPathComponent("ws"), actor: "bench", now: { Self.now })
                let clock = ContinuousClock()
                let start = clock.now
                let summary = try AppleHealthImporter(workspace: workspace).importExport(URL(fileURLWithPath: importOnly), participantCode: "P-0001")
                let seconds = (clock.now - start) / .seconds(1)
                let line: [String: Double] = [
                    "seconds": seconds, "seen": Double(summary.total.seen), "imported": Double(summary.total.imported), "peak_rss": Double(PeakMemory.bytes()),
                ]
                print(String(decoding: try JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]), as: UTF8.self))
                return
            }
            let fm = FileManager.default
            try ImportBenchChild.freshFolder(base, bench: "applehealth")
            let xml = base.appendingPathComponent("export.xml")
            let written = try AppleHealthExportGenerator(samples: samples).write(to: xml)
            let bytes = (try fm.attributesOfItem(atPath: xml.path)[.size] as? NSNumber)?.intValue ?? 0
            let root = try ExampleFiles.temporaryCopy()
            defer { try? fm.removeItem(at: root) }
            let workspace = try Workspace.create(
                at: base.appendingPathComponent("ws"), protocolURL: root.appendingPathComponent(DemoRun.protocolPath), actor: "bench", now: { Self.now })
            _ = try Roster(workspace: workspace).enroll(
                [(RosterEntry(code: "P-0001", name: "Bench Person", birthDate: "1980-02-29", sex: "female", timeZone: "Europe/Berlin", enrolledOn: Self.enrolled), line: nil)],
                file: nil, source: "bench")
            _ = try ConsentService(workspace: workspace).record(
                code: "P-0001", version: "1.0", signedAt: Timestamp(epochMilliseconds: 1_767_225_600_000), signature: "typed:Bench", sharing: .studyOnly)

            let (result, seconds) = try ImportBenchChild.run(["applehealth", "--dir", base.path, "--import-only", xml.path])
            let imported = Int(result["imported"] ?? 0)
            let seen = Int(result["seen"] ?? 0)
            let rate = Double(seen) / max(seconds, 1e-9)
            let rss = Int(result["peak_rss"] ?? 0)
            var report: [String: Any] = [
                "samples_written": written, "export_xml_bytes": bytes, "seconds": seconds, "samples_seen": seen, "records_imported": imported,
                "samples_per_second": Int(rate), "peak_rss_bytes": rss, "peak_rss_target_bytes": 100 << 20,
            ]
            if !json {
                print("Apple Health import: \(written) samples, \(bytes >> 20) MiB export.xml")
                print(String(format: "  cohort: %.1f s, %d samples/s, %d records stored, peak RSS %.1f MiB (target ≤ 100 MiB)", seconds, Int(rate), imported,
                    Double(rss) / 1_048_576))
            }
            if !noCompare {
                if let tool = Self.healthkitToSQLite() {
                    let out = base.appendingPathComponent("healthkit.db")
                    let clock = ContinuousClock()
                    let start = clock.now
                    let other = Process()
                    other.executableURL = tool
                    other.arguments = [xml.path, out.path, "--xml"]
                    other.standardOutput = FileHandle.nullDevice
                    other.standardError = FileHandle.nullDevice
                    try other.run()
                    other.waitUntilExit()
                    let otherSeconds = (clock.now - start) / .seconds(1)
                    let ratio = otherSeconds / max(seconds, 1e-9)
                    report["healthkit_to_sqlite_seconds"] = otherSeconds
                    report["healthkit_to_sqlite_exit"] = Int(other.terminationStatus)
                    report["speedup"] = ratio
                    if !json {
                        print(String(format: "  healthkit-to-sqlite 1.0.1: %.1f s (exit %d) → cohort is %.1f× faster (target ≥ 10×)", otherSeconds,
                            other.terminationStatus, ratio))
                    }
                } else if !json {
                    print("  healthkit-to-sqlite comparison skipped: no .venv/bin/healthkit-to-sqlite (scripts/setup-venv.sh) and no $HEALTHKIT_TO_SQLITE")
                }
            }
            if json { print(String(decoding: try JSONSerialization.data(withJSONObject: report, options: [.prettyPrinted, .sortedKeys]), as: UTF8.self)) }
        }

        /// `$HEALTHKIT_TO_SQLITE`, or `.venv/bin/healthkit-to-sqlite` in the current folder.
        static func healthkitToSQLite() -> URL? {
            if let path = ProcessInfo.processInfo.environment["HEALTHKIT_TO_SQLITE"], FileManager.default.isExecutableFile(atPath: path) {
                return URL(fileURLWithPath: path)
            }
            let local = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".venv/bin/healthkit-to-sqlite")
            return FileManager.default.isExecutableFile(atPath: local.path) ? local : nil
        }
    }
}

/// Writes a synthetic export.xml shaped like the Health app's: records grouped by type, device
/// strings, metadata entries, HRV beat lists, sleep stages, a workout with a route. Streamed
/// through a 1 MiB buffer. Deterministic.
struct AppleHealthExportGenerator {
    var samples: Int

    /// Share of samples per type (the rest are heart rate), roughly as in real exports.
    static let mix: [(type: String, unit: String, share: Double)] = [
        ("HKQuantityTypeIdentifierStepCount", "count", 0.15),
        ("HKQuantityTypeIdentifierActiveEnergyBurned", "kcal", 0.20),
        ("HKQuantityTypeIdentifierDistanceWalkingRunning", "km", 0.10),
        ("HKQuantityTypeIdentifierBasalEnergyBurned", "kcal", 0.10),
        ("HKQuantityTypeIdentifierHeartRateVariabilitySDNN", "ms", 0.01),
        ("HKQuantityTypeIdentifierRestingHeartRate", "count/min", 0.005),
        ("HKCategoryTypeIdentifierSleepAnalysis", "", 0.02),
    ]

    func write(to url: URL) throws -> Int {
        guard FileManager.default.createFile(atPath: url.path, contents: nil), let handle = FileHandle(forWritingAtPath: url.path) else {
            throw CohortError(.system, "cannot write export.xml", at: .init(file: url.path))
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
        try put("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE HealthData [
            <!ELEMENT HealthData (ExportDate,Me,(Record|Correlation|Workout|ActivitySummary|ClinicalRecord|Audiogram)*)>
            <!ATTLIST HealthData locale CDATA #REQUIRED>
            <!ELEMENT Record ((MetadataEntry|HeartRateVariabilityMetadataList)*)>
            <!ATTLIST Record type CDATA #REQUIRED unit CDATA #IMPLIED value CDATA #IMPLIED sourceName CDATA #REQUIRED sourceVersion CDATA #IMPLIED device CDATA #IMPLIED creationDate CDATA #IMPLIED startDate CDATA #REQUIRED endDate CDATA #REQUIRED>
            ]>
            <HealthData locale="en_GB">
             <ExportDate value="2026-12-31 20:00:00 +0100"/>
             <Me HKCharacteristicTypeIdentifierDateOfBirth="1980-02-29" HKCharacteristicTypeIdentifierBiologicalSex="HKBiologicalSexFemale" HKCharacteristicTypeIdentifierBloodType="HKBloodTypeNotSet" HKCharacteristicTypeIdentifierFitzpatrickSkinType="HKFitzpatrickSkinTypeNotSet" HKCharacteristicTypeIdentifierCardioFitnessMedicationsUse="None"/>

            """)
        let watch = "sourceName=\"Bench’s Apple Watch\" sourceVersion=\"10.1\" device=\"&lt;&lt;HKDevice: 0x283c8f0c0&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, hardware:Watch6,2, software:10.1&gt;\""
        let phone = "sourceName=\"Bench’s iPhone\" sourceVersion=\"17.1\" device=\"&lt;&lt;HKDevice: 0x2811a2e90&gt;, name:iPhone, manufacturer:Apple Inc., model:iPhone, hardware:iPhone14,5, software:17.1&gt;\""
        var plan = Self.mix.map { ($0.type, $0.unit, Int(Double(samples) * $0.share)) }
        plan.insert(("HKQuantityTypeIdentifierHeartRate", "count/min", samples - plan.reduce(0) { $0 + $1.2 }), at: 0)
        // 2026-01-01 00:00 +0100 plus a spread over 85 days (inside the 90-day study period), in Apple’s form.
        let base = Int64(1_767_222_000)
        var random = SeededRandom(seed: 7)
        func stamp(_ seconds: Int64) -> String {
            let local = base + seconds + 3600
            let day = CivilDate(daysSinceEpoch: Int(local / 86_400))
            let s = Int(local % 86_400)
            return String(format: "%@ %02d:%02d:%02d +0100", day.description, s / 3600, s / 60 % 60, s % 60)
        }
        var written = 0
        for (type, unit, count) in plan where count > 0 {
            let step = max(Int64(1), Int64(85 * 86_400) / Int64(count))
            for i in 0..<count {
                let t = Int64(i) * step
                let start = stamp(t)
                let source = type.contains("StepCount") || type.contains("Distance") ? phone : watch
                switch type {
                case "HKCategoryTypeIdentifierSleepAnalysis":
                    let stages = ["InBed", "AsleepCore", "AsleepDeep", "AsleepREM", "Awake"]
                    try put(" <Record type=\"\(type)\" \(source) creationDate=\"\(start)\" startDate=\"\(start)\" endDate=\"\(stamp(t + 1800))\" value=\"HKCategoryValueSleepAnalysis\(stages[i % 5])\"/>\n")
                case "HKQuantityTypeIdentifierHeartRate":
                    let value = 55 + Int(random.next() % 70)
                    try put(" <Record type=\"\(type)\" \(source) unit=\"\(unit)\" creationDate=\"\(start)\" startDate=\"\(start)\" endDate=\"\(start)\" value=\"\(value)\">\n  <MetadataEntry key=\"HKMetadataKeyHeartRateMotionContext\" value=\"\(i % 3)\"/>\n </Record>\n")
                case "HKQuantityTypeIdentifierHeartRateVariabilitySDNN":
                    try put(" <Record type=\"\(type)\" \(source) unit=\"ms\" creationDate=\"\(start)\" startDate=\"\(start)\" endDate=\"\(stamp(t + 60))\" value=\"\(20 + Int(random.next() % 80)).5\">\n  <HeartRateVariabilityMetadataList>\n   <InstantaneousBeatsPerMinute bpm=\"61\" time=\"7:00:01.20 AM\"/>\n   <InstantaneousBeatsPerMinute bpm=\"63\" time=\"7:00:02.15 AM\"/>\n  </HeartRateVariabilityMetadataList>\n </Record>\n")
                case "HKQuantityTypeIdentifierStepCount":
                    try put(" <Record type=\"\(type)\" \(source) unit=\"count\" creationDate=\"\(start)\" startDate=\"\(start)\" endDate=\"\(stamp(t + 300))\" value=\"\(Int(random.next() % 900))\"/>\n")
                default:
                    try put(" <Record type=\"\(type)\" \(source) unit=\"\(unit)\" creationDate=\"\(start)\" startDate=\"\(start)\" endDate=\"\(stamp(t + 60))\" value=\"\(Double(random.next() % 10_000) / 100)\"/>\n")
                }
                written += 1
            }
        }
        try put("""
             <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" \(watch) startDate="\(stamp(3600))" endDate="\(stamp(5400))">
              <WorkoutRoute \(watch) startDate="\(stamp(3600))" endDate="\(stamp(5400))"><FileReference path="/workout-routes/route_1.gpx"/></WorkoutRoute>
             </Workout>
            </HealthData>

            """)
        try handle.write(contentsOf: buffer)
        return written + 1
    }
}
