import Foundation

/// A ``PostgresConnection`` shared by the threads of one process, one at a time.
///
/// Why the compiler's Sendable check is waived for this class (one of the three waivers in
/// Sources): libpq allows one thread per connection at a time, and this wrapper holds the
/// connection behind a lock and hands it out only inside ``withConnection(_:)``. Its callers (the
/// PostgreSQL store) never keep or return the connection from that closure, so the connection is
/// only touched while the lock is held; both stored properties are immutable.
public final class SerializedConnection: @unchecked Sendable {
    private let lock = NSLock()
    private let connection: PostgresConnection

    /// Wraps `connection`; use it only through this wrapper from now on.
    public init(_ connection: PostgresConnection) {
        self.connection = connection
    }

    /// Runs `body` with the connection, holding the lock.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }
}
