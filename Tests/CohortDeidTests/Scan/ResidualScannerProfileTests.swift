import CohortCore
import Foundation
import Testing

@testable import CohortDeid

/// A harness for profiling the scanner on real export output (`perf record` through the test
/// binary; valgrind 3.19 crashes on the Swift Testing runner's threads, so instruction counts
/// come from linking the release objects into a one-thread program outside the package); it
/// runs only when `COHORT_SCAN_PROFILE` names a directory to scan.
struct ResidualScannerProfileTests {
    static var profileDirectory: String? { ProcessInfo.processInfo.environment["COHORT_SCAN_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } }

    @Test(.enabled(if: profileDirectory != nil, "a profiling harness: set COHORT_SCAN_PROFILE to a directory to scan"))
    func scanTheDirectoryInCOHORT_SCAN_PROFILE() throws {
        let path = try #require(Self.profileDirectory)
        let roster = PlantedRoster.participants + Fixtures.roster(count: 300, seed: 9)
        let scanner = ResidualScanner(roster: roster, threads: 1)
        let result = try Self.profiledScan(scanner, URL(fileURLWithPath: path))
        // Synthetic participants are not the export's, so nothing of theirs is in it.
        #expect(result.filesScanned > 0)
    }

    /// The scan alone, in a function of its own so a profiler can count it inclusively.
    @inline(never)
    static func profiledScan(_ scanner: ResidualScanner, _ directory: URL) throws -> ResidualScanResult {
        try scanner.scan(directory: directory)
    }
}
