import CohortTestSupport
import Foundation
import Testing

/// The test runner's own child-process helper: a child that exits is collected even when
/// something else still holds its output pipe (the CI PostgreSQL pass hung on exactly that — a
/// server another test thread started had inherited a `cohort` child's pipes).
struct ChildProcessTests {
    @Test func aChildThatExitsIsCollectedWhileItsPipeIsStillHeld() throws {
        // The shell exits at once; the sleeper it leaves behind keeps both pipes open.
        let started = Date()
        let outcome = try ChildProcess.run("/bin/sh", ["-c", "sleep 600 & echo $!; echo to-stderr >&2"])
        let elapsed = Date().timeIntervalSince(started)
        let sleeper = String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let pid = Int32(sleeper) { kill(pid, SIGKILL) }
        #expect(outcome.status == 0)
        #expect(Int32(sleeper) != nil, "the output written before the exit is kept")
        #expect(String(decoding: outcome.stderr, as: UTF8.self) == "to-stderr\n")
        #expect(elapsed < 300, "returned after the child's exit, not the sleeper's")
    }

    /// A descriptor this process has open without close-on-exec is not passed to the child.
    @Test func theChildInheritsOnlyItsThreeDescriptors() throws {
        var leaked: [Int32] = [-1, -1]
        #expect(pipe(&leaked) == 0)
        defer { for fd in leaked { close(fd) } }
        let outcome = try ChildProcess.run("/bin/sh", ["-c", "ls /proc/self/fd"])
        let open = String(decoding: outcome.stdout, as: UTF8.self).split(separator: "\n").compactMap { Int32($0) }
        #expect(!open.contains(leaked[0]) && !open.contains(leaked[1]), "\(open)")
    }

    @Test func outputAndStatusAsBefore() throws {
        let outcome = try ChildProcess.run("/bin/sh", ["-c", "cat; echo err >&2; exit 3"], stdin: Array("in\n".utf8), mergingErrors: true)
        #expect(outcome.status == 3)
        #expect(String(decoding: outcome.stdout, as: UTF8.self) == "in\nerr\n")
        #expect(outcome.stderr.isEmpty)
    }
}
