import Foundation
import CohortKit
import Testing

/// The progress line drawn on a terminal: bar, count, rate and ETA from the same inputs.
struct ProgressLineTests {
    @Test func aKnownTotalGivesBarPercentRateAndETA() {
        let line = ProgressLine(label: "importing a.csv", done: 250_000, total: 1_000_000, unit: "rows", elapsed: 2).render()
        // 25% of a 24-wide bar = 6 filled; 125,000 rows/s; 750,000 left at that rate = 6 s.
        #expect(line == "importing a.csv  [######··················]   25%  250,000/1,000,000 rows  125,000 rows/s  ETA 0:06")
    }

    @Test func anUnknownTotalGivesCountAndRateOnly() {
        let line = ProgressLine(label: "importing b.ndjson", done: 1_234_567, total: nil, unit: "rows", elapsed: 4).render()
        #expect(line == "importing b.ndjson  1,234,567 rows  308,642 rows/s")
        #expect(!line.contains("ETA") && !line.contains("["))
    }

    @Test func theEtaIsTheRemainingWorkAtTheRateSoFar() {
        let p = ProgressLine(label: "exporting", done: 30, total: 372, unit: "participants", elapsed: 10)
        #expect(p.rate == 3)
        #expect(p.secondsLeft == 114)
        #expect(p.render().hasSuffix("ETA 1:54"))
        let long = ProgressLine(label: "x", done: 1, total: 10_000, unit: "rows", elapsed: 1)
        #expect(ProgressLine.duration(long.secondsLeft ?? 0) == "2:46:39")
    }

    @Test func beforeAnyTimeHasPassedThereIsNoRateAndNoETA() {
        let p = ProgressLine(label: "exporting", done: 0, total: 10, unit: "participants", elapsed: 0)
        #expect(p.rate == 0 && p.secondsLeft == nil)
        #expect(p.render() == "exporting  [························]    0%  0/10 participants  0 participants/s")
    }

    @Test func aCountPastTheEstimateFillsTheBarWithoutOverflowing() {
        let line = ProgressLine(label: "l", done: 120, total: 100, unit: "rows", elapsed: 1).render()
        #expect(line.contains("[" + String(repeating: "#", count: ProgressLine.barWidth) + "]  100%"))
        #expect(line.hasSuffix("ETA 0:00"))
    }

    @Test func bytesAreShownInMegabytesWithARateInMegabytesPerSecond() {
        // 12 MiB of 48 MiB in 2 s: 6.0 MB/s, 36 MiB left = 6 s; a quarter of the bar.
        let line = ProgressLine(label: "verifying x.tar.gz", done: 12 << 20, total: 48 << 20, unit: .bytes, elapsed: 2).render()
        #expect(line == "verifying x.tar.gz  [######··················]   25%  12.0/48.0 MB  6.0 MB/s  ETA 0:06")
        let open = ProgressLine(label: "reading", done: 3 << 19, total: nil, unit: .bytes, elapsed: 1).render()
        #expect(open == "reading  1.5 MB  1.5 MB/s")
    }

    @Test(arguments: [(0, "0"), (999, "999"), (1000, "1,000"), (1_000_000, "1,000,000"), (-12345, "-12,345")])
    func groupsThousands(value: Int, text: String) {
        #expect(ProgressLine.grouped(value) == text)
    }
}
