import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// This process's peak resident memory so far (`getrusage`), in bytes.
enum PeakMemory {
    static func bytes() -> Int {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        #if os(Linux)
        return Int(usage.ru_maxrss) * 1024  // kilobytes on Linux
        #else
        return Int(usage.ru_maxrss)
        #endif
    }
}
