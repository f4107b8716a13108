import Foundation

/// One line of a progress display: a bar (when the total is known), the count, the rate and the
/// estimated time left. Pure: the same inputs give the same line, so it is tested directly. Both
/// executables (`cohort` and `cohort-bench`) draw it through ``ProgressBar``.
public struct ProgressLine: Equatable, Sendable {
    /// What is counted: items with a plural name (`"rows"`), or bytes (shown in MB, rate in MB/s).
    public enum Unit: Equatable, Sendable, ExpressibleByStringLiteral {
        /// Items, plural ("rows", "participants", "samples").
        case items(String)
        /// Bytes, shown as MB (2^20 bytes, as cohort-bench reports) with one decimal.
        case bytes

        /// A string literal counts items of that name.
        public init(stringLiteral value: String) { self = .items(value) }
    }

    /// What is being done, e.g. `importing a.csv`.
    public var label: String
    /// How many so far.
    public var done: Int
    /// The expected total; nil when unknown (then no bar, no percentage and no ETA).
    public var total: Int?
    /// What is counted.
    public var unit: Unit
    /// Seconds since the work began.
    public var elapsed: Double

    /// A line for `done` of `total` `unit` after `elapsed` seconds.
    public init(label: String, done: Int, total: Int?, unit: Unit, elapsed: Double) {
        self.label = label
        self.done = done
        self.total = total
        self.unit = unit
        self.elapsed = elapsed
    }

    /// Width of the bar in characters.
    public static let barWidth = 24

    /// Units per second so far (0 before any time has passed).
    public var rate: Double { elapsed > 0 ? Double(done) / elapsed : 0 }

    /// Seconds left at the rate so far; nil without a total or a rate.
    public var secondsLeft: Double? {
        guard let total, rate > 0 else { return nil }
        return Double(max(total - done, 0)) / rate
    }

    /// `importing a.csv [##########··············]  42%  420,000/1,000,000 rows  350,000 rows/s  ETA 0:02`,
    /// or for bytes `verifying x.tar.gz [####····]  17%  12.0/70.5 MB  40.2 MB/s  ETA 0:02`.
    public func render() -> String {
        var parts = [label]
        if let total, total > 0 {
            let fraction = min(max(Double(done) / Double(total), 0), 1)
            let filled = Int((fraction * Double(Self.barWidth)).rounded(.down))
            parts.append("[" + String(repeating: "#", count: filled) + String(repeating: "·", count: Self.barWidth - filled) + "]")
            parts.append(String(format: "%3d%%", Int((fraction * 100).rounded(.down))))
            switch unit {
            case .items(let name): parts.append("\(Self.grouped(done))/\(Self.grouped(total)) \(name)")
            case .bytes: parts.append("\(Self.megabytes(Double(done)))/\(Self.megabytes(Double(total))) MB")
            }
        } else {
            switch unit {
            case .items(let name): parts.append("\(Self.grouped(done)) \(name)")
            case .bytes: parts.append("\(Self.megabytes(Double(done))) MB")
            }
        }
        switch unit {
        case .items(let name): parts.append("\(Self.grouped(Int(rate.rounded()))) \(name)/s")
        case .bytes: parts.append("\(Self.megabytes(rate)) MB/s")
        }
        if let left = secondsLeft { parts.append("ETA " + Self.duration(left)) }
        return parts.joined(separator: "  ")
    }

    /// 1234567 → `1,234,567`.
    public static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// Bytes as MB (2^20) with one decimal: 1_572_864 → `1.5`.
    public static func megabytes(_ bytes: Double) -> String {
        String(format: "%.1f", bytes / 1_048_576)
    }

    /// Seconds as `m:ss`, or `h:mm:ss` from an hour.
    public static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }
}
