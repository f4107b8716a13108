package import CohortCore
package import Foundation

/// One stored row read column by column, for either store: SQLite's ``RowReader`` (a GRDB
/// `Row`) and PostgreSQL's `PostgresRow` (libpq's text values) implement the four typed reads
/// and the error; everything else — required values, offsets, ids, enumerations, dates, JSON —
/// is read here once, so a per-table record type (``ParticipantRow``, ``ConsentRow``, …)
/// decodes the same way from both stores.
///
/// A missing or malformed value throws ``problem(_:expected:)``: table, row and column and what
/// was expected, never the value.
package protocol ColumnReader {
    /// The error for `column` of this row: it is not what `expected` says.
    func problem(_ column: String, expected: String) -> CohortError
    /// The column's text, nil for NULL (or a column not selected).
    func optionalString(_ column: String) throws -> String?
    /// The column's integer, nil for NULL.
    func optionalInt64(_ column: String) throws -> Int64?
    /// The column's number, nil for NULL.
    func optionalDouble(_ column: String) throws -> Double?
    /// The column's bytes, nil for NULL.
    func optionalBytes(_ column: String) throws -> [UInt8]?
    /// The column's truth value (SQLite: 0 or 1; PostgreSQL: `boolean`).
    func bool(_ column: String) throws -> Bool
    /// True when the row has `column` (a column added by a later migration).
    func hasColumn(_ column: String) -> Bool
}

/// The one error for a stored column that is not what it should be, in either store: table, row,
/// column and what was expected, never the value; `backup` names what to restore (SQLite's
/// `study.db`, or the PostgreSQL database).
package func malformedColumn(table: String, rowID: Int64?, column: String, expected: String, file: String, backup: String) -> CohortError {
    malformedColumn(table: table, row: "row \(rowID.map(String.init) ?? "?")", column: column, expected: expected, file: file, backup: backup)
}

/// ``malformedColumn(table:rowID:column:expected:file:backup:)`` for a row named by `row` (e.g.
/// SQLite's `records`, which has no rowid: "row of participant 3").
package func malformedColumn(table: String, row: String, column: String, expected: String, file: String, backup: String) -> CohortError {
    CohortError(
        .integrity, "table \(table), \(row), column \(column): expected \(expected)",
        at: .init(file: file, field: "\(table).\(column)"),
        hint: "the database was edited or damaged: restore \(backup) from a backup (cohort does not guess a replacement value)",
        cause: .malformedColumn(table: table, column: column))
}

extension ColumnReader {
    package func string(_ column: String) throws -> String {
        guard let text = try optionalString(column) else { throw problem(column, expected: "text, found nothing") }
        return text
    }

    package func int64(_ column: String) throws -> Int64 {
        guard let n = try optionalInt64(column) else { throw problem(column, expected: "an integer, found nothing") }
        return n
    }

    package func bytes(_ column: String) throws -> [UInt8] {
        guard let bytes = try optionalBytes(column) else { throw problem(column, expected: "binary data, found nothing") }
        return bytes
    }

    /// A UTC offset in seconds (±18 h).
    package func offset(_ column: String) throws -> Int32 {
        let n = try int64(column)
        guard abs(n) <= 18 * 3600 else { throw problem(column, expected: "a UTC offset in seconds (within ±18 hours)") }
        return Int32(n)
    }

    package func uuid(_ column: String) throws -> UUID {
        guard let uuid = UUID(uuidString: try string(column)) else { throw problem(column, expected: "a UUID") }
        return uuid
    }

    package func choice<E: RawRepresentable & CaseIterable>(_ column: String, _: E.Type) throws -> E where E.RawValue == String {
        guard let value = E(rawValue: try string(column)) else {
            throw problem(column, expected: "one of " + E.allCases.map(\.rawValue).joined(separator: ", "))
        }
        return value
    }

    package func sharingScope(_ column: String) throws -> SharingScope {
        guard let value = SharingScope(rawValue: try string(column)) else {
            throw problem(column, expected: "a sharing scope name (lower-case letters, digits and '-')")
        }
        return value
    }

    package func civilDate(_ column: String) throws -> CivilDate {
        guard let date = CivilDate(iso: try string(column)) else { throw problem(column, expected: "a date YYYY-MM-DD") }
        return date
    }

    /// A JSON object of strings stored as text.
    package func stringMap(_ column: String) throws -> [String: String] {
        guard let map = try? JSONDecoder().decode([String: String].self, from: Data(try string(column).utf8)) else {
            throw problem(column, expected: "a JSON object of strings")
        }
        return map
    }

    /// An instant stored as epoch milliseconds and a UTC offset column.
    package func timestamp(_ milliseconds: String, offset: String) throws -> Timestamp {
        Timestamp(epochMilliseconds: try int64(milliseconds), utcOffsetSeconds: try self.offset(offset))
    }
}
