import CLibPQ
import Foundation
import CohortCore

/// One connection to a PostgreSQL server through libpq, the server's own C client.
///
/// Owns the `PGconn` and closes it in `deinit`; nothing C-typed leaves this module. Not
/// thread-safe: use a connection from one thread at a time (libpq's own rule).
///
/// Errors name the operation and the server's SQLSTATE, never the statement's parameters or the
/// server's message text about a row (PostgreSQL quotes offending values there).
public final class PostgresConnection {
    private let conn: OpaquePointer

    /// Connects to `url` (`postgresql://user@host:port/db?host=/socket/dir`, or a libpq keyword
    /// string such as `host=/tmp port=5433 dbname=study`).
    public init(url: String) throws {
        guard let conn = PQconnectdb(url) else {
            throw CohortError(.system, "cannot allocate a PostgreSQL connection", hint: "the machine may be out of memory")
        }
        guard PQstatus(conn) == CONNECTION_OK else {
            // The connection failure message names host, port and user (no password, no row data).
            let reason = Self.firstLine(PQerrorMessage(conn))
            PQfinish(conn)
            throw CohortError(
                .notFound, "cannot connect to the PostgreSQL server", hint: "check the connection URL (host, port, database, user) and that the server runs",
                underlying: reason)
        }
        self.conn = conn
    }

    deinit { PQfinish(conn) }

    /// Runs `sql` with text parameters `$1…` (nil = SQL NULL) and returns every row as text
    /// (nil = NULL). For small results; stream large ones with ``copyOut(_:_:)``.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let result = try execute(sql, parameters)
        defer { PQclear(result) }
        let rows = Int(PQntuples(result)), columns = Int(PQnfields(result))
        var out: [[String?]] = []
        out.reserveCapacity(rows)
        for r in 0..<rows {
            var row: [String?] = []
            for c in 0..<columns {
                if PQgetisnull(result, Int32(r), Int32(c)) != 0 {
                    row.append(nil)
                } else if let value = PQgetvalue(result, Int32(r), Int32(c)) {
                    row.append(String(cString: value))
                } else {
                    row.append(nil)
                }
            }
            out.append(row)
        }
        return out
    }

    /// Runs a `COPY … TO STDOUT` statement and calls `body` with each row as the server sends it
    /// (one row per call in text and CSV formats, its line end included), without holding more
    /// than one row in memory.
    package func copyOut(_ sql: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        guard let start = PQexec(conn, sql) else { throw failure("COPY", nil) }
        let status = PQresultStatus(start)
        guard status == PGRES_COPY_OUT else {
            defer { PQclear(start) }
            throw failure("COPY", start)
        }
        PQclear(start)
        var thrown: (any Error)?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let n = PQgetCopyData(conn, &buffer, 0)
            if n > 0, let buffer {
                defer { PQfreemem(buffer) }
                // After a caller's error the rest of the stream is drained, so the connection
                // stays usable; the error is thrown at the end.
                if thrown == nil {
                    do {
                        try buffer.withMemoryRebound(to: UInt8.self, capacity: Int(n)) { try body(UnsafeBufferPointer(start: $0, count: Int(n))) }
                    } catch {
                        thrown = error
                    }
                }
                continue
            }
            if n == -1 { break }
            throw CohortError(.system, "the PostgreSQL COPY stream failed", underlying: Self.firstLine(PQerrorMessage(conn)))
        }
        // The COPY's final status.
        while let result = PQgetResult(conn) {
            defer { PQclear(result) }
            if PQresultStatus(result) != PGRES_COMMAND_OK, thrown == nil { thrown = failure("COPY", result) }
        }
        if let thrown { throw thrown }
    }

    /// `name` quoted as an SQL identifier (`"health_metrics"`); `schema.table` is quoted part by part.
    public func quotedIdentifier(_ name: String) throws -> String {
        var parts: [String] = []
        for part in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !part.isEmpty, let quoted = PQescapeIdentifier(conn, String(part), part.utf8.count) else {
                throw CohortError(.invalidInput, "the table name is not a valid SQL name", hint: "use table or schema.table")
            }
            defer { PQfreemem(quoted) }
            parts.append(String(cString: quoted))
        }
        return parts.joined(separator: ".")
    }

    private func execute(_ sql: String, _ parameters: [String?]) throws -> OpaquePointer {
        // Parameters are passed as C strings kept alive for the call.
        let cStrings: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.flatMap { strdup($0) } }
        defer { for p in cStrings { free(p) } }
        let pointers = cStrings.map { UnsafePointer($0) }
        let result = pointers.withUnsafeBufferPointer { buffer in
            PQexecParams(conn, sql, Int32(parameters.count), nil, buffer.baseAddress, nil, nil, 0)
        }
        guard let result else { throw failure("query", nil) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            defer { PQclear(result) }
            throw failure("query", result)
        }
        return result
    }

    /// An error for a failed statement: SQLSTATE and its class, never the server's message (it
    /// can quote a value).
    private func failure(_ what: String, _ result: OpaquePointer?) -> CohortError {
        var state = "unknown"
        if let result, let field = PQresultErrorField(result, Int32(UInt8(ascii: "C"))) { state = String(cString: field) }
        let meaning = Self.sqlStateClasses[String(state.prefix(2))] ?? "server error"
        return CohortError(
            .system, "the PostgreSQL \(what) failed: \(meaning) (SQLSTATE \(state))",
            hint: state.hasPrefix("42") ? "check the table and column names (see the docs for the expected columns)" : "see the server log for details")
    }

    static let sqlStateClasses = [
        "08": "connection exception", "22": "data exception", "23": "integrity constraint violation", "28": "invalid authorization",
        "3D": "invalid database name", "3F": "invalid schema name", "42": "syntax error or access rule violation (undefined table or column?)",
        "53": "insufficient resources", "57": "operator intervention", "XX": "internal error",
    ]

    static func firstLine(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "no message" }
        return String(cString: message).split(separator: "\n").first.map(String.init) ?? "no message"
    }
}
