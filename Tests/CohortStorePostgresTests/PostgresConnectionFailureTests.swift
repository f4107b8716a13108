import CohortCore
import CohortPostgres
import CohortStore
import CohortStorePostgres
import Foundation
import Testing

/// What a coordinator reads when the server cannot or will not serve: a server that accepts the
/// connection and never answers, a connection lost mid-session, a statement past its limit, a
/// missing privilege. Each must be a message naming the cause and the setting, never a hang.
@Suite(.serialized)
struct PostgresConnectionFailureTests {
    /// A TCP listener that completes handshakes (the kernel's backlog) and never says a word.
    final class SilentServer {
        let fd: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let ok = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard fd >= 0, ok, listen(fd, 8) == 0 else {
                close(fd)
                throw CohortError(.system, "cannot listen on 127.0.0.1")
            }
            self.fd = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(fd) }
    }

    @Test func aServerThatNeverAnswersFailsTheConnectAfterItsTimeout() throws {
        let server = try SilentServer()
        let started = Date()
        let error = #expect(throws: CohortError.self) {
            _ = try PostgresConnection(url: "postgresql://nobody@127.0.0.1:\(server.port)/study?connect_timeout=2&sslmode=disable")
        }
        let waited = Date().timeIntervalSince(started)
        // libpq counts the timeout in whole seconds: a 2 s timeout ends after 1–2 s.
        #expect(waited >= 0.9 && waited < 10, "waited \(waited) s for a 2 s connect timeout")
        #expect(error?.message.contains("did not answer within the connect timeout") == true, "\(String(describing: error))")
        #expect(error?.hint?.contains("connect_timeout") == true)
        #expect(PostgresConnection.connectionDefaults.contains { $0.key == "connect_timeout" }, "every connection has one by default")
    }

    @Test(.enabled(if: PostgresFixture.enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aLostConnectionSaysSo() throws {
        let url = try PostgresFixture.freshDatabase()
        let conn = try PostgresConnection(url: url)
        let pid = try #require(try conn.query("SELECT pg_backend_pid()").first?.first ?? nil)
        try PostgresConnection(url: url).query("SELECT pg_terminate_backend($1::int)", [pid])
        let error = #expect(throws: CohortError.self) { try conn.query("SELECT 1") }
        #expect(error?.message.contains("connection to the PostgreSQL server was lost") == true, "\(String(describing: error))")
        #expect(error?.message.contains("SQLSTATE unknown") == false)
    }

    /// A statement past `statement_timeout` (here an append waiting for the chain's lock, which
    /// another session holds, with a longer lock timeout) is cancelled and named as such.
    @Test(.enabled(if: PostgresFixture.enabled, "needs PostgreSQL 15 server programs (Debian postgresql); required in CI"))
    func aStatementPastItsLimitIsCancelledNamingTheSetting() throws {
        let url = try PostgresFixture.freshDatabase()
        _ = try PostgresStudyStore(url: url, piiKey: PostgresFixture.piiKey, create: true)
        let store = try PostgresStudyStore(
            url: url, piiKey: PostgresFixture.piiKey, options: StoreOpenOptions(lockTimeout: .seconds(30), statementTimeout: .milliseconds(500)))
        let holder = try PostgresConnection(url: url)
        try holder.query("BEGIN")
        try holder.query("SELECT cohort_lock_audit_chain()")
        defer { _ = try? holder.query("ROLLBACK") }
        let started = Date()
        let error = #expect(throws: CohortError.self) {
            try store.appendEvent(AuditEntry(actor: "coordinator", action: "test.write", subject: nil, details: [:]), at: Date())
        }
        #expect(Date().timeIntervalSince(started) < 10)
        #expect(error?.cause == .sqlState("57014"))
        #expect(error?.message.contains("ran longer than 0.5 s") == true, "\(String(describing: error))")
        #expect(error?.hint?.contains("COHORT_STATEMENT_TIMEOUT") == true)
    }
}
