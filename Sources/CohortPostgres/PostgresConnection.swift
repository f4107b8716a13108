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

    /// What every connection gets unless its URL says otherwise: a server that accepts the TCP
    /// connection but never answers fails the connect after `connect_timeout` seconds instead of
    /// hanging cohort, and TCP keepalives notice a peer that vanished mid-command (a statement
    /// waiting on a dead server otherwise waits for ever; `statement_timeout` runs on the server
    /// and cannot help then). Unix-socket connections ignore the keepalive settings.
    public static let connectionDefaults: [(key: String, value: String)] = [
        ("connect_timeout", "10"), ("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"), ("keepalives_count", "3"),
    ]

    /// Connects to `url` (`postgresql://user@host:port/db?host=/socket/dir`, or a libpq keyword
    /// string such as `host=/tmp port=5433 dbname=study`), with ``connectionDefaults`` for what
    /// the URL does not set (`?connect_timeout=30` in the URL wins).
    public init(url: String) throws {
        try Self.loadLibrary()
        // The defaults come before the URL: libpq lets a later keyword (the expanded URL's) override an earlier one.
        let keys = Self.connectionDefaults.map(\.key) + ["dbname"]
        let values = Self.connectionDefaults.map(\.value) + [url]
        let cKeys: [UnsafeMutablePointer<CChar>?] = keys.map { strdup($0) } + [nil]
        let cValues: [UnsafeMutablePointer<CChar>?] = values.map { strdup($0) } + [nil]
        defer { for p in cKeys + cValues { free(p) } }
        let connected = cKeys.map { UnsafePointer($0) }.withUnsafeBufferPointer { k in
            cValues.map { UnsafePointer($0) }.withUnsafeBufferPointer { v in cohort_PQconnectdbParams(k.baseAddress, v.baseAddress, 1) }
        }
        guard let conn = connected else {
            throw CohortError(.system, "cannot allocate a PostgreSQL connection", hint: "the machine may be out of memory")
        }
        guard cohort_PQstatus(conn) == CONNECTION_OK else {
            // The connection failure message names host, port and user (no password, no row data).
            let reason = Self.firstLine(cohort_PQerrorMessage(conn))
            cohort_PQfinish(conn)
            if reason.contains("timeout expired") {
                throw CohortError(
                    .notFound, "the PostgreSQL server did not answer within the connect timeout",
                    hint: "check that the server runs and is reachable (host, port, firewall); allow longer with ?connect_timeout=<seconds> in the URL (default 10)",
                    underlying: reason, cause: .sqlState("08001"))
            }
            throw CohortError(
                .notFound, "cannot connect to the PostgreSQL server", hint: "check the connection URL (host, port, database, user) and that the server runs",
                underlying: reason)
        }
        self.conn = conn
    }

    deinit { cohort_PQfinish(conn) }

    /// Loads libpq (once per process; see `CLibPQ.h`): a machine without it runs everything but
    /// PostgreSQL, and says what to install when PostgreSQL is asked for.
    static func loadLibrary() throws {
        var reason = [CChar](repeating: 0, count: 256)
        guard cohort_pq_load(&reason, reason.count) == 0 else { return }
        throw CohortError(
            .system, String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self),
            hint: "install PostgreSQL's client library (Debian: apt-get install libpq5) to use a PostgreSQL store")
    }

    /// Runs `sql` with text parameters `$1…` (nil = SQL NULL) and returns every row as text
    /// (nil = NULL). For small results; stream large ones with ``copyOut(_:_:)``.
    @discardableResult
    public func query(_ sql: String, _ parameters: [String?] = []) throws -> [[String?]] {
        let result = try run(sql, parameters.map { PostgresValue.optional($0) })
        defer { cohort_PQclear(result) }
        return Self.rows(result)
    }

    /// Runs a `COPY … TO STDOUT` statement and calls `body` with each row as the server sends it
    /// (one row per call in text and CSV formats, its line end included), without holding more
    /// than one row in memory.
    package func copyOut(_ sql: String, _ body: (UnsafeBufferPointer<UInt8>) throws -> Void) throws {
        guard let start = cohort_PQexec(conn, sql) else { throw failure("COPY", nil) }
        let status = cohort_PQresultStatus(start)
        guard status == PGRES_COPY_OUT else {
            defer { cohort_PQclear(start) }
            throw failure("COPY", start)
        }
        cohort_PQclear(start)
        var thrown: (any Error)?
        while true {
            var buffer: UnsafeMutablePointer<CChar>?
            let n = cohort_PQgetCopyData(conn, &buffer, 0)
            if n > 0, let buffer {
                defer { cohort_PQfreemem(buffer) }
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
            throw CohortError(.system, "the PostgreSQL COPY stream failed", underlying: Self.firstLine(cohort_PQerrorMessage(conn)))
        }
        // The COPY's final status.
        while let result = cohort_PQgetResult(conn) {
            defer { cohort_PQclear(result) }
            if cohort_PQresultStatus(result) != PGRES_COMMAND_OK, thrown == nil { thrown = failure("COPY", result) }
        }
        if let thrown { throw thrown }
    }

    /// Runs `sql` with typed parameters `$1…` (bytes are sent in binary, everything else as
    /// text) and returns every row as text (nil = NULL; a `bytea` column comes back as `\\x`
    /// hex, see ``PostgresValue/bytes(fromText:)``).
    @discardableResult
    public func query(_ sql: String, values: [PostgresValue]) throws -> [[String?]] {
        let result = try run(sql, values)
        defer { cohort_PQclear(result) }
        return Self.rows(result)
    }

    /// Runs an `INSERT`/`UPDATE`/`DELETE` (or any statement) with typed parameters; the number of
    /// rows it changed.
    @discardableResult
    public func command(_ sql: String, values: [PostgresValue] = []) throws -> Int {
        let result = try run(sql, values)
        defer { cohort_PQclear(result) }
        guard let tuples = cohort_PQcmdTuples(result) else { return 0 }
        return Int(String(cString: tuples)) ?? 0
    }

    private func run(_ sql: String, _ values: [PostgresValue]) throws -> OpaquePointer {
        // Each parameter as a malloc'd copy kept alive for the call: text as a C string (format
        // 0), bytes as themselves with their length (format 1), NULL as a null pointer.
        var pointers: [UnsafeMutablePointer<CChar>?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        defer { for p in pointers { free(p) } }
        for value in values {
            var text: String?
            switch value {
            case .null: text = nil
            case .text(let t): text = t
            case .int(let i): text = String(i)
            case .double(let d): text = d.isFinite ? "\(d)" : nil
            case .bytes(let b):
                let p = malloc(max(b.count, 1))?.assumingMemoryBound(to: CChar.self)
                if let p { b.withUnsafeBytes { raw in if let base = raw.baseAddress { memcpy(p, base, b.count) } } }
                pointers.append(p)
                lengths.append(Int32(b.count))
                formats.append(1)
                continue
            }
            pointers.append(text.flatMap { strdup($0) })
            lengths.append(0)
            formats.append(0)
        }
        let constPointers = pointers.map { UnsafePointer($0) }
        let result = constPointers.withUnsafeBufferPointer { params in
            lengths.withUnsafeBufferPointer { lens in
                formats.withUnsafeBufferPointer { fmts in
                    cohort_PQexecParams(conn, sql, Int32(values.count), nil, params.baseAddress, lens.baseAddress, fmts.baseAddress, 0)
                }
            }
        }
        guard let result else { throw failure("query", nil) }
        let status = cohort_PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            defer { cohort_PQclear(result) }
            throw failure("query", result)
        }
        return result
    }

    /// Runs `body` in one transaction (`BEGIN` … `COMMIT`), rolled back when `body` throws.
    /// `isolation` is a PostgreSQL isolation level (`READ COMMITTED` by default).
    public func transaction<T>(isolation: String = "READ COMMITTED", _ body: () throws -> T) throws -> T {
        try query("BEGIN ISOLATION LEVEL \(isolation)")
        do {
            let value = try body()
            try query("COMMIT")
            return value
        } catch {
            _ = try? query("ROLLBACK")
            throw error
        }
    }

    /// Runs a `COPY … FROM STDIN` statement; `body` is handed a function that sends bytes of the
    /// stream (text or binary COPY, as the statement says). Returns the rows the server stored.
    /// When `body` throws, the COPY is aborted and nothing of it is kept.
    @discardableResult
    package func copyIn(_ sql: String, _ body: ((UnsafeRawBufferPointer) throws -> Void) throws -> Void) throws -> Int {
        try beginCopyIn(sql)
        do {
            try body { try self.putCopyData($0) }
        } catch {
            _ = try? endCopyIn(abortingWith: "aborted by cohort")
            throw error
        }
        return try endCopyIn()
    }

    /// Starts a `COPY … FROM STDIN` statement. Send its bytes with ``putCopyData(_:)`` as they
    /// are produced — the server stores them while the caller makes the next ones — and end it
    /// with ``endCopyIn(abortingWith:)``. Nothing else may run on the connection in between.
    package func beginCopyIn(_ sql: String) throws {
        guard let start = cohort_PQexec(conn, sql) else { throw failure("COPY", nil) }
        defer { cohort_PQclear(start) }
        guard cohort_PQresultStatus(start) == PGRES_COPY_IN else { throw failure("COPY", start) }
    }

    /// Sends bytes of the COPY begun by ``beginCopyIn(_:)``. libpq sends them once its buffer
    /// fills, so the server works while the caller goes on; a server-side error (a unique
    /// violation, say) is reported by ``endCopyIn(abortingWith:)``.
    package func putCopyData(_ bytes: UnsafeRawBufferPointer) throws {
        guard bytes.count > 0, let base = bytes.baseAddress else { return }
        if cohort_PQputCopyData(conn, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count)) != 1 {
            throw CohortError(.system, "the PostgreSQL COPY stream failed", underlying: Self.firstLine(cohort_PQerrorMessage(conn)))
        }
    }

    /// Ends the COPY begun by ``beginCopyIn(_:)`` and returns the rows the server stored; with
    /// `abortingWith`, aborts it (nothing of it is kept) and returns 0.
    @discardableResult
    package func endCopyIn(abortingWith reason: String? = nil) throws -> Int {
        var thrown: (any Error)?
        if cohort_PQputCopyEnd(conn, reason) != 1 {
            thrown = CohortError(.system, "the PostgreSQL COPY stream failed", underlying: Self.firstLine(cohort_PQerrorMessage(conn)))
        }
        var stored = 0
        while let result = cohort_PQgetResult(conn) {
            defer { cohort_PQclear(result) }
            if cohort_PQresultStatus(result) == PGRES_COMMAND_OK {
                if let tuples = cohort_PQcmdTuples(result) { stored = Int(String(cString: tuples)) ?? 0 }
            } else if thrown == nil, reason == nil {
                thrown = failure("COPY", result)
            }
        }
        if let thrown { throw thrown }
        return reason == nil ? stored : 0
    }

    /// `name` quoted as an SQL identifier (`"health_metrics"`); `schema.table` is quoted part by part.
    public func quotedIdentifier(_ name: String) throws -> String {
        var parts: [String] = []
        for part in name.split(separator: ".", omittingEmptySubsequences: false) {
            guard !part.isEmpty, let quoted = cohort_PQescapeIdentifier(conn, String(part), part.utf8.count) else {
                throw CohortError(.invalidInput, "the table name is not a valid SQL name", hint: "use table or schema.table")
            }
            defer { cohort_PQfreemem(quoted) }
            parts.append(String(cString: quoted))
        }
        return parts.joined(separator: ".")
    }

    /// Every row of `result` as text (nil = NULL).
    private static func rows(_ result: OpaquePointer) -> [[String?]] {
        let rows = Int(cohort_PQntuples(result)), columns = Int(cohort_PQnfields(result))
        var out: [[String?]] = []
        out.reserveCapacity(rows)
        for r in 0..<rows {
            var row: [String?] = []
            row.reserveCapacity(columns)
            for c in 0..<columns {
                if cohort_PQgetisnull(result, Int32(r), Int32(c)) != 0 {
                    row.append(nil)
                } else if let value = cohort_PQgetvalue(result, Int32(r), Int32(c)) {
                    row.append(String(cString: value))
                } else {
                    row.append(nil)
                }
            }
            out.append(row)
        }
        return out
    }

    /// The SQLSTATE of the last failed statement's error, as thrown by this connection (for
    /// callers that retry serialization failures, `40001`, or map unique violations, `23505`).
    public static func sqlState(of error: any Error) -> String? {
        guard case let .sqlState(state)? = (error as? CohortError)?.cause else { return nil }
        return state
    }

    /// An error for a failed statement: SQLSTATE and its class, never the server's message (it
    /// can quote a value).
    private func failure(_ what: String, _ result: OpaquePointer?) -> CohortError {
        var state = "unknown"
        if let result, let field = cohort_PQresultErrorField(result, Int32(UInt8(ascii: "C"))) { state = String(cString: field) }
        if state == "unknown", cohort_PQstatus(conn) != CONNECTION_OK {
            // No SQLSTATE because no server answered: the connection is gone.
            return CohortError(
                .system, "the connection to the PostgreSQL server was lost during the \(what)",
                hint: "check that the server runs and the network; what the command had not committed was rolled back by the server — run it again",
                underlying: Self.firstLine(cohort_PQerrorMessage(conn)), cause: .sqlState("08006"))
        }
        let meaning = Self.sqlStates[state] ?? Self.sqlStateClasses[String(state.prefix(2))] ?? "server error"
        return CohortError(
            .system, "the PostgreSQL \(what) failed: \(meaning) (SQLSTATE \(state))",
            hint: state == "42501"
                ? "this database role lacks the privilege: connect with a role that has it (site roles cannot change the protocol, the study or the audit trail; see docs/multi-site.md)"
                : state.hasPrefix("42") ? "check the table and column names (see the docs for the expected columns)" : "see the server log for details",
            cause: state == "unknown" ? nil : .sqlState(state))
    }

    /// SQLSTATEs whose meaning is more precise than their class's.
    static let sqlStates = [
        "42501": "permission denied (the database role lacks the privilege)", "57014": "statement cancelled (statement_timeout or a cancel request)",
        "55P03": "lock not available (lock_timeout)", "42P01": "undefined table", "42703": "undefined column",
    ]

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

/// A statement parameter.
public enum PostgresValue: Sendable, Hashable {
    case null
    case text(String)
    case int(Int64)
    case double(Double)
    /// Bytes (`bytea`), sent in binary.
    case bytes([UInt8])

    /// `text` or NULL.
    public static func optional(_ text: String?) -> PostgresValue { text.map { .text($0) } ?? .null }
    /// `int` or NULL.
    public static func optional(_ int: Int64?) -> PostgresValue { int.map { .int($0) } ?? .null }
    /// `bytes` or NULL.
    public static func optional(_ bytes: [UInt8]?) -> PostgresValue { bytes.map { .bytes($0) } ?? .null }

    /// The bytes of a `bytea` column read as text (`\\x0a1b…`); nil when `text` is not that form.
    public static func bytes(fromText text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity((utf8.count - 2) / 2)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var i = 2
        while i < utf8.count {
            guard let high = nibble(utf8[i]), let low = nibble(utf8[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}
