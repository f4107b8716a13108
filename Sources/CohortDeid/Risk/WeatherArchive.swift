import CohortCore

/// A public weather archive as an adversary holds one (issue 27): per station (a city) and
/// exogenous kind, one value per day (days since 1970). The exogenous attack aligns a
/// participant's published series with it.
public struct WeatherArchive: Sendable {
    /// station → kind → day → value.
    public var series: [String: [String: [Int: Double]]]

    /// An archive as given.
    package init(series: [String: [String: [Int: Double]]]) { self.series = series }

    /// The best alignment of `values` (one per day, `days` published days, any order) with the
    /// archive's `kind` series: for every station and every `shift` (real day = published day −
    /// shift), the Pearson correlation of the day-to-day changes of both (so an offset, a scale or
    /// within-participant deltas do not hide the match); nil with fewer than `minimumDays`
    /// consecutive pairs. Returns the best shift, its correlation and the best correlation of
    /// any other shift (the margin an adversary trusts).
    public func align(kind: String, daily: [Int: Double], shifts: [Int], minimumDays: Int = 14)
        -> (shift: Int, station: String, r: Double, runnerUp: Double)?
    {
        let days = daily.keys.sorted()
        // Changes between consecutive published days.
        var pairs: [(day: Int, delta: Double)] = []
        for (a, b) in zip(days, days.dropFirst()) where b == a + 1 {
            if let x = daily[a], let y = daily[b] { pairs.append((b, y - x)) }
        }
        guard pairs.count >= minimumDays else { return nil }
        var best: (shift: Int, station: String, r: Double)?
        var bestByShift: [Int: Double] = [:]
        for station in series.keys.sorted() {
            guard let archive = series[station]?[kind] else { continue }
            for shift in shifts {
                var xs: [Double] = [], ys: [Double] = []
                xs.reserveCapacity(pairs.count)
                ys.reserveCapacity(pairs.count)
                for pair in pairs {
                    guard let x = archive[pair.day - shift - 1], let y = archive[pair.day - shift] else { continue }
                    xs.append(y - x)
                    ys.append(pair.delta)
                }
                guard xs.count >= minimumDays, let r = Self.pearson(xs, ys) else { continue }
                bestByShift[shift] = max(bestByShift[shift] ?? -1, r)
                if best.map({ r > $0.r }) ?? true { best = (shift, station, r) }
            }
        }
        guard let best else { return nil }
        let runnerUp = bestByShift.filter { $0.key != best.shift }.values.max() ?? -1
        return (best.shift, best.station, best.r, runnerUp)
    }

    /// The best alignment of an undated sequence (`values` in time order, one per day) with the
    /// archive's `kind` series: the real day of its first value, by the same day-to-day change
    /// correlation over every start day in `days`. What publishing weather as deltas or bins
    /// "without calendar anchoring" still gives away: the real dates, hence the shift of every
    /// other dated record of the participant.
    package func alignUndated(kind: String, values: [Double], startDays: ClosedRange<Int>, minimumDays: Int = 14)
        -> (firstDay: Int, station: String, r: Double, runnerUp: Double)?
    {
        guard values.count > minimumDays else { return nil }
        let deltas = zip(values, values.dropFirst()).map { $1 - $0 }
        var best: (day: Int, station: String, r: Double)?
        var bestByDay: [Int: Double] = [:]
        for station in series.keys.sorted() {
            guard let archive = series[station]?[kind] else { continue }
            for start in startDays {
                var xs: [Double] = []
                for i in 0..<deltas.count {
                    guard let x = archive[start + i], let y = archive[start + i + 1] else { break }
                    xs.append(y - x)
                }
                guard xs.count == deltas.count, let r = Self.pearson(xs, deltas) else { continue }
                bestByDay[start] = max(bestByDay[start] ?? -1, r)
                if best.map({ r > $0.r }) ?? true { best = (start, station, r) }
            }
        }
        guard let best else { return nil }
        return (best.day, best.station, best.r, bestByDay.filter { $0.key != best.day }.values.max() ?? -1)
    }

    static func pearson(_ x: [Double], _ y: [Double]) -> Double? {
        let n = Double(x.count)
        guard x.count == y.count, x.count > 2 else { return nil }
        let mx = x.reduce(0, +) / n, my = y.reduce(0, +) / n
        var sxy = 0.0, sxx = 0.0, syy = 0.0
        for (a, b) in zip(x, y) {
            sxy += (a - mx) * (b - my)
            sxx += (a - mx) * (a - mx)
            syy += (b - my) * (b - my)
        }
        guard sxx > 0, syy > 0 else { return nil }
        return sxy / (sxx * syy).squareRoot()
    }

    /// An alignment an adversary trusts: a strong match well clear of any other shift.
    package static func confident(r: Double, runnerUp: Double) -> Bool { r >= 0.6 && r - runnerUp >= 0.25 }
}
