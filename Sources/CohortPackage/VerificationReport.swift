/// The outcome of verifying an export: every check that could run, and whether all passed.
public struct VerificationReport: Sendable, Hashable, Codable {
    /// The archive verified (as given).
    public var archive: String
    /// True only when every check passed.
    public var passed: Bool
    /// The checks, in the order they were made.
    public var checks: [VerificationCheck]

    /// A report over `checks`; `passed` is computed from them (false when there are none).
    package init(archive: String, checks: [VerificationCheck]) {
        self.archive = archive
        self.checks = checks
        self.passed = !checks.isEmpty && checks.allSatisfy(\.passed)
    }

    /// The check named `name`, if it ran.
    public func check(named name: String) -> VerificationCheck? {
        checks.first { $0.name == name }
    }

    /// Names of the checks that failed.
    package var failedChecks: [String] {
        checks.filter { !$0.passed }.map(\.name)
    }

    /// One line per check, then a verdict line.
    public var text: String {
        var lines = checks.map(\.line)
        let failed = checks.filter { !$0.passed }.count
        lines.append(passed ? "verified: \(checks.count) checks passed" : "FAILED: \(failed) of \(checks.count) checks failed")
        return lines.joined(separator: "\n") + "\n"
    }
}
