import ArgumentParser
import CohortKit
import Foundation
import CohortDeid

extension Cohort.Deid {
    /// `cohort deid risk`: an auditor's re-identification risk report from the published files.
    struct Risk: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-identification risk of an export, from its published files alone (k, prosecutor risk, uniqueness, l-diversity).",
            discussion: """
                Reads an export archive (.tar.gz, without a workspace or keys) or its unpacked bag folder. \
                Equivalence classes are formed over the quasi-identifier columns the export's \
                de-identification report names (every column of data/csv/participants.csv besides the \
                pseudonym); l-diversity is computed for the sensitive fields the report names, plus any \
                given with --sensitive (table.column of the CSV files, e.g. medications.text).

                Measures: k (smallest class), prosecutor risk (max 1/k, average classes/records), \
                sample uniqueness (share of records alone in their class), l per sensitive field. \
                The table shows the 20 smallest classes; json and csv give every class.

                Time attacks (from the files alone, with the public holidays of the US, Germany and \
                Australia it ships): freshness (the last record against the bagging date), DST trace \
                (aggregates not 24 hours long, dense series with an hour missing or doubled, daily logs \
                stepping by an hour), holiday alignment (daily step counts against the regional \
                calendar), exogenous series (dated weather: aligned with --weather-archive when given, \
                day-to-day changes correlated over every station and shift; without it every participant \
                with dated weather counts as recovered); per attack the participants whose shift is \
                recovered (one candidate left) or narrowed (under half the range). k is also computed \
                over what an acquaintance knows from the records (device class, kinds, active days \
                banded; first-record weekday and month when shifts keep them).

                Exit codes: 0 the published files hold what the report claims (k reaches the \
                requested k and equals the stated k, also with the acquaintance attributes; no shift \
                recovered; no shift narrowed by an attack the report does not name); 1 they do not; 3 invalid input (unreadable \
                report or CSV); 4 archive, folder or table not found; 7 a corrupt archive; 2 usage.

                Examples:
                  cohort deid risk exports/axspa-wearables-20260101T000000Z.tar.gz
                  cohort deid risk exports/axspa-wearables-20260101T000000Z \\
                    --format json
                  cohort deid risk export.tar.gz --sensitive medications.text \\
                    --format csv > classes.csv
                  cohort deid risk export.tar.gz --weather-archive pressure.csv
                """)

        @Argument(help: "An export archive (.tar.gz) or an unpacked bag folder.") var path: String
        @Option(help: "An extra sensitive field for l-diversity, as table.column (repeatable).") var sensitive: [String] = []
        @Option(help: "How to print the assessment (csv: one row per equivalence class).") var format: OutputFormat = .table
        @Option(help: "A public weather archive to align published exogenous series with (CSV: station,kind,date,value).")
        var weatherArchive: String?
        @OptionGroup var output: OutputOptions

        func validate() throws {
            for name in sensitive where name.split(separator: ".").count != 2 {
                throw ValidationError("--sensitive expects table.column, e.g. medications.text")
            }
        }

        func run() throws {
            let archive = try weatherArchive.map { try DeidRiskService.readWeatherArchive(URL(fileURLWithPath: $0)) }
            let assessment = try DeidRiskService.assess(path: URL(fileURLWithPath: path), extraSensitive: sensitive, archive: archive)
            let risk = assessment.risk
            let fields = risk.lDiversity.map(\.field)
            switch format {
            case .json:
                let encoder = JSONEncoder.pretty
                Console.print(String(decoding: try encoder.encode(assessment), as: UTF8.self))
            case .csv:
                let header = risk.quasiIdentifiers + ["size", "prosecutor_risk"] + fields.map { "l_\($0)" }
                let rows = risk.equivalenceClasses.map { c in
                    c.values + [String(c.size), Self.number(1 / Double(c.size))] + fields.map { String(c.diversity[$0] ?? 0) }
                }
                FileHandle.standardOutput.write(Data(TableRenderer.csv(header, rows).utf8))
            case .table:
                var kText = risk.k.map(String.init) ?? "n/a"
                if let requested = assessment.requestedK { kText += " (requested \(requested))" }
                if let stated = assessment.statedK { kText += ", report states \(stated)" }
                var lines: [[String]] = [
                    ["quasi-identifiers", risk.quasiIdentifiers.joined(separator: ", ")],
                    ["records", String(risk.records)],
                    ["equivalence classes", String(risk.classes)],
                    ["k", kText],
                    ["prosecutor risk max", Self.number(risk.prosecutorRiskMax)],
                    ["prosecutor risk average", Self.number(risk.prosecutorRiskAverage)],
                    ["sample uniqueness", Self.number(risk.sampleUniqueness) + " (\(risk.uniqueRecords) record(s) alone in their class)"],
                ]
                for d in risk.lDiversity {
                    lines.append(["l-diversity \(d.field)", (d.l.map(String.init) ?? "n/a") + " (\(d.homogeneousClasses) class(es) with one value)"])
                }
                if let k = assessment.acquaintanceK {
                    // With day shifts the first record's weekday and month are not real: not counted.
                    let weekday = assessment.acquaintanceAttributes.contains("first_record_weekday") ? "" : "; first-record weekday not counted: shifts by days"
                    lines.append(["k with acquaintance attributes", "\(k) (\(assessment.acquaintanceAttributes.joined(separator: ", "))\(weekday))"])
                }
                for outcome in assessment.timeAttacks ?? [] {
                    let stated = assessment.statedSignals.contains(outcome.attack) ? "; the report names this signal" : ""
                    lines.append([
                        "time attack \(outcome.attack)",
                        "\(outcome.recovered) recovered, \(outcome.narrowed) narrowed of \(outcome.assessed) participant(s)\(stated)",
                    ])
                }
                for signal in assessment.unattackedSignals { lines.append(["signal not attacked", signal]) }
                Console.print(TableRenderer.table(["measure", "value"], lines))
                let shown = risk.equivalenceClasses.prefix(20)
                Console.print("")
                Console.print(
                    TableRenderer.table(
                        risk.quasiIdentifiers + ["size"] + fields.map { "l \($0)" },
                        shown.map { c in c.values + [String(c.size)] + fields.map { String(c.diversity[$0] ?? 0) } }))
                if risk.equivalenceClasses.count > shown.count {
                    Console.print("(\(risk.equivalenceClasses.count - shown.count) larger class(es) not shown; --format json or csv lists all)")
                }
                for warning in assessment.warnings { Console.print("warning: \(warning)") }
                Console.print(assessment.holds ? "✔ the published files hold what the report claims" : "✘ the published files do not hold what the report claims")
            }
            if !assessment.holds { throw ExitCode(1) }
        }

        /// A share with 4 decimals.
        static func number(_ value: Double) -> String { String(format: "%.4f", value) }
    }
}
