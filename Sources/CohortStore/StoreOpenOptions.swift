import CohortCore
import Foundation

/// How a command opens the database.
public struct StoreOpenOptions: Sendable {
    /// Read-only commands open the database read-only, so they also work on a copy nobody may
    /// write (an auditor's `chmod -R a-w` copy).
    public var readOnly: Bool
    /// How long a writer waits for another command's lock before it fails.
    public var lockTimeout: Duration
    /// Called once, the first time a wait for the lock has lasted one second (the CLI prints
    /// "waiting for another cohort command…").
    public var onWaiting: (@Sendable () -> Void)?
    /// Called once before an existing SQLite database's schema is upgraded by migrations it has
    /// not run yet (the CLI prints "upgrading the study database…": `v6-records-by-key` rebuilds
    /// a large study's records, once). Not called for a new database or one already up to date,
    /// nor by the PostgreSQL store, whose migrations run on the server as DDL under its own lock.
    public var onUpgrading: (@Sendable () -> Void)?

    /// How long one statement may run on a database server before the server cancels it
    /// (PostgreSQL's `statement_timeout`; nil: no limit). SQLite has no server and ignores it.
    public var statementTimeout: Duration?

    /// Options for a command; `lockTimeout` defaults to 60 s, `statementTimeout` to 600 s.
    public init(
        readOnly: Bool = false, lockTimeout: Duration = .seconds(60), statementTimeout: Duration? = .seconds(600),
        onWaiting: (@Sendable () -> Void)? = nil, onUpgrading: (@Sendable () -> Void)? = nil
    ) {
        self.readOnly = readOnly
        self.lockTimeout = lockTimeout
        self.statementTimeout = statementTimeout
        self.onWaiting = onWaiting
        self.onUpgrading = onUpgrading
    }

    /// Options for a command run from a shell: the lock timeout from `COHORT_LOCK_TIMEOUT`, the
    /// statement timeout from `COHORT_STATEMENT_TIMEOUT`.
    public static func command(
        readOnly: Bool, environment: [String: String], onWaiting: (@Sendable () -> Void)?, onUpgrading: (@Sendable () -> Void)? = nil
    ) throws -> StoreOpenOptions {
        StoreOpenOptions(
            readOnly: readOnly, lockTimeout: try lockTimeout(environment: environment), statementTimeout: try statementTimeout(environment: environment),
            onWaiting: onWaiting, onUpgrading: onUpgrading)
    }

    /// The statement timeout from `COHORT_STATEMENT_TIMEOUT` (seconds, a number > 0; 0 means
    /// none), else 600 s.
    public static func statementTimeout(environment: [String: String]) throws -> Duration? {
        guard let text = environment["COHORT_STATEMENT_TIMEOUT"] else { return .seconds(600) }
        guard let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds >= 0, seconds.isFinite else {
            throw CohortError.invalid(
                "COHORT_STATEMENT_TIMEOUT must be a number of seconds (0 for no limit)", field: "COHORT_STATEMENT_TIMEOUT",
                hint: "for example COHORT_STATEMENT_TIMEOUT=1800, or unset it for the default of 600")
        }
        return seconds == 0 ? nil : .milliseconds(max(Int64(seconds * 1000), 1))
    }

    /// The lock timeout from `COHORT_LOCK_TIMEOUT` (seconds, a number ≥ 0), else 60 s.
    public static func lockTimeout(environment: [String: String]) throws -> Duration {
        guard let text = environment["COHORT_LOCK_TIMEOUT"] else { return .seconds(60) }
        guard let seconds = Double(text.trimmingCharacters(in: .whitespaces)), seconds >= 0, seconds.isFinite else {
            throw CohortError.invalid(
                "COHORT_LOCK_TIMEOUT must be a number of seconds (0 or more)", field: "COHORT_LOCK_TIMEOUT",
                hint: "for example COHORT_LOCK_TIMEOUT=120, or unset it for the default of 60")
        }
        return .milliseconds(Int64(seconds * 1000))
    }
}
