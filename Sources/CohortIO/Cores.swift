import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The processor cores this process may run on: the CPUs of its affinity mask (`taskset`, a
/// container's cpuset), capped by its cgroup's CPU quota (`cpu.max`, e.g. `docker --cpus 2`).
/// `ProcessInfo.activeProcessorCount` counts the machine's online CPUs and ignores both, so a
/// job confined to one core would still start a thread per machine core (issue 28: the thread
/// defaults follow the cores the process really has, and `cohort-bench --cores` measures on 1,
/// 2 … of them).
package enum Cores {
    /// The cores this process may use, at least 1.
    package static var available: Int {
        let cpus = allowedCPUs().count
        let byMask = cpus > 0 ? cpus : ProcessInfo.processInfo.activeProcessorCount
        return max(1, min(byMask, quota() ?? byMask))
    }

    /// The CPU numbers of this process's affinity mask, ascending (empty when the mask cannot be
    /// read): from `sched_getaffinity`, or else `/proc/self/status`'s `Cpus_allowed_list`.
    package static func allowedCPUs() -> [Int] {
        #if canImport(Glibc)
        if let get = Affinity.get {
            var mask = Affinity.Mask()
            if withUnsafeMutableBytes(of: &mask, { get(0, $0.count, $0.baseAddress) }) == 0 { return mask.cpus }
        }
        #endif
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
        else { return [] }
        return parseList(String(line.dropFirst("Cpus_allowed_list:".count))) ?? []
    }

    /// Confines this process (its threads, and the processes it starts from now on) to `cpus`.
    package static func restrict(to cpus: [Int]) throws {
        #if canImport(Glibc)
        guard let set = Affinity.set else { throw CoresError.unsupported }
        var mask = Affinity.Mask(cpus: cpus)
        let status = withUnsafeMutableBytes(of: &mask) { set(0, $0.count, $0.baseAddress) }
        guard status == 0 else { throw CoresError.refused(errno: errno) }
        #else
        throw CoresError.unsupported
        #endif
    }

    /// The CPU quota of this process's cgroup (v2 `cpu.max`), in whole cores rounded up; nil
    /// when there is none or it cannot be read.
    static func quota() -> Int? {
        guard let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
            let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") })
        else { return nil }
        let path = "/sys/fs/cgroup" + line.dropFirst(3) + "/cpu.max"
        return (try? String(contentsOfFile: path, encoding: .utf8)).flatMap(quotaCores)
    }

    /// Whole cores (rounded up) of a `cpu.max` text, `QUOTA PERIOD` in microseconds; nil for
    /// `max` (no quota) or text that is not that.
    static func quotaCores(_ text: String) -> Int? {
        let fields = text.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let quota = Int(fields[0]), let period = Int(fields[1]), quota > 0, period > 0 else { return nil }
        return max(1, (quota + period - 1) / period)
    }

    /// The CPUs of a kernel CPU list (`0-3,8,10-11`, as in `/proc/self/status`'s
    /// `Cpus_allowed_list`); nil for text that is not one.
    package static func parseList(_ text: String) -> [Int]? {
        var cpus: [Int] = []
        for part in text.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", omittingEmptySubsequences: false).map { Int($0) }
            guard (1...2).contains(bounds.count), let low = bounds[0], let high = bounds[bounds.count - 1], low <= high else { return nil }
            cpus += low...high
        }
        return cpus.isEmpty ? nil : cpus
    }
}

/// Why ``Cores/restrict(to:)`` could not confine the process.
package enum CoresError: Error, CustomStringConvertible {
    case unsupported
    case refused(errno: Int32)

    package var description: String {
        switch self {
        case .unsupported: "this system cannot confine a process to some of its cores (no sched_setaffinity)"
        case .refused(let code): "the system refused to confine the process to those cores (\(String(cString: strerror(code))))"
        }
    }
}

#if canImport(Glibc)
/// glibc's `sched_getaffinity` / `sched_setaffinity`, looked up at run time: Swift's Glibc
/// module leaves out what `<sched.h>` declares only under `_GNU_SOURCE`.
private enum Affinity {
    typealias Call = @convention(c) (pid_t, Int, UnsafeMutableRawPointer?) -> Int32

    static let get: Call? = lookup("sched_getaffinity")
    static let set: Call? = lookup("sched_setaffinity")

    private static func lookup(_ name: String) -> Call? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: Call.self) }
    }

    /// A `cpu_set_t`: 1,024 CPUs, one bit each.
    struct Mask {
        var words = (
            UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
            UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0)
        )

        init() {}

        init(cpus: [Int]) {
            withUnsafeMutableBytes(of: &words) { bytes in
                for cpu in cpus where (0..<bytes.count * 8).contains(cpu) { bytes[cpu / 8] |= UInt8(1) << UInt8(cpu % 8) }
            }
        }

        var cpus: [Int] {
            withUnsafeBytes(of: words) { bytes in
                (0..<bytes.count * 8).filter { bytes[$0 / 8] & (UInt8(1) << UInt8($0 % 8)) != 0 }
            }
        }
    }
}
#endif
