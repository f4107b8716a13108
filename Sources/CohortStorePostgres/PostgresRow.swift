import CohortCore
import CohortPostgres
import CohortStore
import Foundation

/// One row of a PostgreSQL result (every column as text, as libpq returns it), read column by
/// column: PostgreSQL's `ColumnReader`, so the store's record types decode it as they decode
/// SQLite's rows. A missing or malformed value is an error naming the table, row and column and what
/// was expected — never the value — exactly as the SQLite store's `RowReader` words it.
struct PostgresRow: ColumnReader {
    let values: [String?]
    let columns: [String: Int]
    let table: String
    let location: String
    /// The row's key, for messages.
    let rowID: Int64?

    /// `names` are the selected columns in order; `rowIDColumn` names the key messages cite.
    init(_ values: [String?], names: [String], table: String, location: String, rowIDColumn: String?) {
        self.values = values
        var columns: [String: Int] = [:]
        for (i, name) in names.enumerated() { columns[name] = i }
        self.columns = columns
        self.table = table
        self.location = location
        rowID = rowIDColumn.flatMap { columns[$0] }.flatMap { $0 < values.count ? values[$0] : nil }.flatMap { Int64($0) }
    }

    /// Every row of `rows` read with the column list `selected` (comma-separated, as in the SELECT).
    static func rows(_ rows: [[String?]], selected: String, table: String, location: String, rowIDColumn: String?) -> [PostgresRow] {
        let names = Self.names(selected)
        return rows.map { PostgresRow($0, names: names, table: table, location: location, rowIDColumn: rowIDColumn) }
    }

    /// The column names of a SELECT list (`a, b AS c, t.d` → a, c, d).
    static func names(_ selected: String) -> [String] {
        selected.split(separator: ",").map { item in
            let words = item.split(separator: " ").map(String.init)
            let last = words.last ?? ""
            return String(last.split(separator: ".").last ?? Substring(last))
        }
    }

    func problem(_ column: String, expected: String) -> CohortError {
        PostgresStudyStore.problem(table: table, rowID: rowID, column: column, expected: expected, location: location)
    }

    func optionalString(_ column: String) -> String? {
        guard let index = columns[column], index < values.count else { return nil }
        return values[index]
    }

    func hasColumn(_ column: String) -> Bool { columns[column] != nil }

    func optionalInt64(_ column: String) throws -> Int64? {
        guard let text = optionalString(column) else { return nil }
        guard let n = Int64(text) else { throw problem(column, expected: "an integer") }
        return n
    }

    func optionalDouble(_ column: String) throws -> Double? {
        guard let text = optionalString(column) else { return nil }
        guard let x = Double(text) else { throw problem(column, expected: "a number") }
        return x
    }

    func bool(_ column: String) throws -> Bool {
        switch try string(column) {
        case "t": return true
        case "f": return false
        default: throw problem(column, expected: "true or false")
        }
    }

    func optionalBytes(_ column: String) throws -> [UInt8]? {
        guard let text = optionalString(column) else { return nil }
        guard let bytes = PostgresValue.bytes(fromText: text) else { throw problem(column, expected: "binary data") }
        return bytes
    }
}

extension PostgresStudyStore {
    /// The error for a column of row `rowID` of `table` that is not what `expected` says.
    static func problem(table: String, rowID: Int64?, column: String, expected: String, location: String) -> CohortError {
        malformedColumn(table: table, rowID: rowID, column: column, expected: expected, file: location, backup: "it")
    }

    /// Rows of `sql` read with the column list `selected`.
    func rows(
        _ conn: PostgresConnection, _ sql: String, _ values: [PostgresValue] = [], selected: String, table: String, rowIDColumn: String?
    ) throws -> [PostgresRow] {
        PostgresRow.rows(try conn.query(sql, values: values), selected: selected, table: table, location: location, rowIDColumn: rowIDColumn)
    }

    /// Runs `body` in one read-committed write transaction on this store's connection, turning
    /// the server's refusals this store expects into messages a coordinator can act on (the
    /// SQLSTATE stays in the underlying text).
    func change<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try connection.withConnection { conn in try conn.transaction { try body(conn) } }
        } catch let error as CohortError {
            switch PostgresConnection.sqlState(of: error) {
            case "25006":
                throw CohortError(.system, "this command opened the study database read-only and cannot change it", at: .init(file: location))
            case "40P01":
                // Two coordinators' commands wrote the same rows in opposite orders (two imports
                // of overlapping files, say): the server cancels one of them, which rolls back whole.
                throw CohortError(
                    .conflict, "another coordinator's command wrote the same rows at the same moment, and the database cancelled this one to let it finish; nothing of this command was stored",
                    at: .init(file: location), hint: "run it again (rows the other command stored count as duplicates)", underlying: error.message, cause: error.cause)
            case "55P03":
                throw CohortError(
                    .conflict, "another coordinator has held a lock on the study database for more than \(options.lockTimeout.seconds) s",
                    at: .init(file: location),
                    hint: "wait for the other command to finish and run this again; allow a longer wait with COHORT_LOCK_TIMEOUT=<seconds>",
                    underlying: error.message, cause: error.cause)
            default:
                throw located(Self.explained(error, options: options, location: location))
            }
        }
    }

    /// `error` with a message a coordinator can act on when the server refused for a reason
    /// every command can meet: a missing privilege (42501) or a statement that ran past
    /// `statement_timeout` (57014). The SQLSTATE stays in the cause; other errors pass unchanged.
    static func explained(_ error: CohortError, options: StoreOpenOptions, location: String) -> CohortError {
        switch PostgresConnection.sqlState(of: error) {
        case "42501":
            return CohortError(
                .security,
                "the study database refused this command: this workspace's database role lacks the privilege (a site coordinator's role cannot change the protocol, the study, the audit trail directly, or another site's participants)",
                at: .init(file: location),
                hint: "run it from a workspace whose role may (the study owner's for the protocol and site roles); `cohort site add` again re-grants what a site needs",
                underlying: error.message, cause: error.cause)
        case "57014":
            let limit = options.statementTimeout.map { "\($0.seconds) s" } ?? "its limit"
            return CohortError(
                .system, "a statement on the study database ran longer than \(limit) and the server cancelled it; nothing of this command was stored",
                at: .init(file: location), hint: "run it again when the server is less busy, or allow longer with COHORT_STATEMENT_TIMEOUT=<seconds> (0: no limit)",
                underlying: error.message, cause: error.cause)
        default:
            return error
        }
    }

    /// Runs `body` in one repeatable-read, read-only transaction (one snapshot for the whole
    /// read); errors name this database.
    func reading<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        try reading(on: connection, body)
    }

    /// ``reading(_:)`` on `connection` (the store's, or a record reader's).
    func reading<T>(on connection: SerializedConnection, _ body: (PostgresConnection) throws -> T) throws -> T {
        do {
            return try connection.withConnection { conn in try conn.transaction(isolation: "REPEATABLE READ READ ONLY") { try body(conn) } }
        } catch let error as CohortError {
            throw located(Self.explained(error, options: options, location: location))
        }
    }

    /// `error` naming this database when it names no place (the connection's errors carry the
    /// SQLSTATE only).
    func located(_ error: CohortError) -> CohortError {
        guard error.location == nil else { return error }
        var located = error
        located.location = .init(file: location)
        return located
    }
}

extension Duration {
    /// Whole seconds, or seconds with one decimal below 10 s.
    var seconds: String {
        let seconds = Double(components.seconds) + Double(components.attoseconds) / 1e18
        return seconds >= 10 || seconds == seconds.rounded() ? String(Int(seconds.rounded())) : String(format: "%.1f", seconds)
    }
}
