import Foundation
import Testing

@testable import CohortIO

/// ``Cores``: the CPUs of the affinity mask as `/proc/self/status` lists them (read here on its
/// own), and the parsers of a CPU list and a cgroup quota.
struct CoresTests {
    @Test func allowedCPUsAreTheAffinityMaskTheKernelReports() throws {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let list = try #require(status.split(separator: "\n").first { $0.hasPrefix("Cpus_allowed_list:") }?.split(separator: ":").last)
        var cpus: [Int] = []
        for range in list.split(separator: ",") {
            let ends = range.split(separator: "-").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            cpus += ends.count == 2 ? Array(ends[0]...ends[1]) : ends
        }
        #expect(Cores.allowedCPUs() == cpus)
        #expect((1...cpus.count).contains(Cores.available))
    }

    @Test func cpuListsParse() {
        #expect(Cores.parseList("0-3,8,10-11\n") == [0, 1, 2, 3, 8, 10, 11])
        #expect(Cores.parseList("5") == [5])
        for bad in ["", "3-1", "a", "1-", "1-2-3", "1,,2"] { #expect(Cores.parseList(bad) == nil, "\(bad)") }
    }

    @Test func cgroupQuotasRoundUpToWholeCores() {
        #expect(Cores.quotaCores("max 100000\n") == nil)
        #expect(Cores.quotaCores("200000 100000\n") == 2)
        #expect(Cores.quotaCores("150000 100000") == 2)
        #expect(Cores.quotaCores("50000 100000") == 1)
        #expect(Cores.quotaCores("garbage") == nil)
    }
}
