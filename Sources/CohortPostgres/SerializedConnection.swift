import Foundation

/// A ``PostgresConnection`` shared by the threads of one process, one at a time.
///
/// libpq allows one thread per connection at a time; this wrapper holds the connection behind a
/// lock and hands it out only inside ``withConnection(_:)``, which is why it may be
/// `@unchecked Sendable`: the connection never leaves the closure, and the closure runs only while
/// the lock is held.
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
