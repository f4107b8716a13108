import Foundation

/// One line of a progress display: a bar (when the total is known), the count, the rate and the
/// estimated time left. Pure: the same inputs give the same line, so it is tested directly.
struct ProgressLine: Equatable {
    var label: String
    var done: Int
    /// The expected total; nil when unknown (then no bar, no percentage and no ETA).
    var total: Int?
    /// What is counted, plural ("rows", "participants", "checks").
    var unit: String
    /// Seconds since the work began.
    var elapsed: Double

    /// Width of the bar in characters.
    static let barWidth = 24

    /// Items per second so far (0 before any time has passed).
    var rate: Double { elapsed > 0 ? Double(done) / elapsed : 0 }

    /// Seconds left at the rate so far; nil without a total or a rate.
    var secondsLeft: Double? {
        guard let total, rate > 0 else { return nil }
        return Double(max(total - done, 0)) / rate
    }

    /// `importing a.csv [##########··············]  42%  420,000/1,000,000 rows  350,000 rows/s  ETA 0:02`
    func render() -> String {
        var parts = [label]
        if let total, total > 0 {
            let fraction = min(max(Double(done) / Double(total), 0), 1)
            let filled = Int((fraction * Double(Self.barWidth)).rounded(.down))
            parts.append("[" + String(repeating: "#", count: filled) + String(repeating: "·", count: Self.barWidth - filled) + "]")
            parts.append(String(format: "%3d%%", Int((fraction * 100).rounded(.down))))
            parts.append("\(Self.grouped(done))/\(Self.grouped(total)) \(unit)")
        } else {
            parts.append("\(Self.grouped(done)) \(unit)")
        }
        parts.append("\(Self.grouped(Int(rate.rounded()))) \(unit)/s")
        if let left = secondsLeft { parts.append("ETA " + Self.duration(left)) }
        return parts.joined(separator: "  ")
    }

    /// 1234567 → `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(abs(value))
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
            out.append(c)
        }
        return (value < 0 ? "-" : "") + out
    }

    /// Seconds as `m:ss`, or `h:mm:ss` from an hour.
    static func duration(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (h, m, s) = (total / 3600, (total % 3600) / 60, total % 60)
        return h > 0 ? String(format: "%d:%02d:%02d", h, m, s) : String(format: "%d:%02d", m, s)
    }
}
