import CohortCompliance
import Foundation

/// One size measured on several core counts (`--cores 1,2,all`): per phase, the seconds on each
/// count, the speed-up over the fewest cores and its fraction of linear — the speed-up divided
/// by how many times more cores ran it (issue 28: import and export reach at least 0.7 of linear
/// up to the core count).
struct CoreScaling: Encodable, Sendable {
    struct Phase: Encodable, Sendable {
        var phase: String
        /// Seconds per core count, in `cores` order.
        var seconds: [Double]
        /// Per core count: the fewest cores' seconds ÷ these; 1 for the fewest.
        var speedUp: [Double]
        /// Per core count: `speedUp` ÷ (cores ÷ the fewest cores).
        var ofLinear: [Double]

        enum CodingKeys: String, CodingKey {
            case phase, seconds
            case speedUp = "speed_up"
            case ofLinear = "of_linear"
        }
    }

    /// Issue 28's goal: each more-cores run at least this fraction of linear.
    static let linearTarget = 0.7
    /// The phases the goal is about: the import and both exports.
    static let phases: [BenchPhase] = [.import, .exportTables, .export]

    var size: String
    var store: String
    var cores: [Int]
    var phases: [Phase]

    /// The scaling of one size and store's `reports`, when they ran on two or more core counts.
    init?(_ reports: [SizeReport]) {
        let runs = reports.sorted { $0.cores < $1.cores }
        guard runs.count >= 2, let first = runs.first, Set(runs.map(\.cores)).count == runs.count else { return nil }
        size = first.size
        store = first.store
        cores = runs.map(\.cores)
        phases = Self.phases.compactMap { phase in
            let seconds = runs.compactMap { $0.phase(phase)?.seconds }
            guard seconds.count == runs.count, seconds.allSatisfy({ $0 > 0 }) else { return nil }
            let speedUp = seconds.map { seconds[0] / $0 }
            let ofLinear = zip(speedUp, runs).map { $0 / (Double($1.cores) / Double(first.cores)) }
            return Phase(phase: phase.rawValue, seconds: seconds, speedUp: speedUp, ofLinear: ofLinear)
        }
    }

    /// Whether every run on more cores than the fewest reached ``linearTarget``.
    func met(_ phase: Phase) -> Bool { phase.ofLinear.dropFirst().allSatisfy { $0 >= Self.linearTarget } }

    /// The table printed after a size's runs.
    func render() -> String {
        let counts = cores.map { "\($0) core\($0 == 1 ? "" : "s")" }
        let header = ["phase"] + counts.map { $0 + ", s" } + counts.dropFirst().map { "speed-up on " + $0 } + ["of linear", "goal ≥ \(Self.linearTarget)"]
        var table = TextTable(header: header, alignments: [.left] + Array(repeating: .right, count: header.count - 1))
        for p in phases {
            table.append(
                [p.phase] + p.seconds.map { String(format: "%.2f", $0) } + p.speedUp.dropFirst().map { String(format: "%.2f×", $0) }
                    + [p.ofLinear.dropFirst().map { String(format: "%.2f", $0) }.joined(separator: " / "), met(p) ? "met" : "NOT met"])
        }
        return "size \(size) on \(store == "postgres" ? "PostgreSQL" : "SQLite"): the same phases on \(counts.joined(separator: ", "))\n\n" + table.render()
    }
}
