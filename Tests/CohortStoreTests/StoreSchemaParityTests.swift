import CohortStore
import Foundation
import Testing

/// Issue 29: the two stores keep their own migration lists (SQLite's four, PostgreSQL's eight:
/// row security, server audit, owner actions and site data keys exist only there, and the names
/// of migrations already applied in existing studies cannot change), so what keeps them from
/// drifting is this check: after every migration, each table SQLite has exists on PostgreSQL
/// with the same columns, and what PostgreSQL has beyond that is the listed multi-site part.
/// Read from the databases' own catalogues (`sqlite3`'s `pragma_table_info`, PostgreSQL's
/// `information_schema`), not from cohort's migration code.
struct StoreSchemaParityTests {
    /// Columns by table, from `rows` of (table, column).
    static func columns(_ rows: [(String, String)]) -> [String: Set<String>] {
        rows.reduce(into: [:]) { $0[$1.0, default: []].insert($1.1) }
    }

    @Test func bothMigrationListsBuildTheSameTables() throws {
        try #require(sqlite3Available, "sqlite3 is needed")
        let sqlite = try withStoreFixture(.sqlite) { fixture in
            _ = try fixture.open(create: true)
            let text = try fixture.sqlite(
                "SELECT m.name || '|' || p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name NOT LIKE 'grdb_%'")
            return Self.columns(text.split(separator: "\n").compactMap { line in
                let parts = line.split(separator: "|").map(String.init)
                return parts.count == 2 ? (parts[0], parts[1]) : nil
            })
        }
        let postgres = try withStoreFixture(.postgres) { fixture in
            _ = try fixture.open(create: true)
            let rows = try fixture.postgres("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'")
            return Self.columns(rows.compactMap { row in
                guard row.count == 2, let table = row[0], let column = row[1] else { return nil }
                return (table, column)
            })
        }
        #expect(!sqlite.isEmpty && !postgres.isEmpty)
        for (table, names) in sqlite {
            let other = postgres[table] ?? []
            #expect(names.subtracting(other).isEmpty, "\(table): only on SQLite: \(names.subtracting(other).sorted())")
            #expect(other.subtracting(names) == Self.postgresOnlyColumns[table, default: []], "\(table): only on PostgreSQL")
        }
        #expect(Set(postgres.keys).subtracting(sqlite.keys) == Self.postgresOnlyTables)
    }

    /// What PostgreSQL has beyond SQLite, and why: its migration ledger (GRDB keeps SQLite's in
    /// `grdb_migrations`, left out above) and the per-site data keys (SQLite has one user and one
    /// key); the committed text of an event's details beside the searchable jsonb (SQLite stores
    /// the text only); the login role that wrote a checkpoint; insertion orders where SQLite uses
    /// its rowid; and `records.id`: SQLite's `records` is clustered on its key since
    /// `v6-records-by-key` (no rowid, so no id; nothing referred to it).
    static let postgresOnlyTables: Set<String> = ["cohort_migrations", "site_data_keys"]
    static let postgresOnlyColumns: [String: Set<String>] = [
        "audit_events": ["details_text"], "audit_checkpoints": ["written_by"], "consents": ["recorded_order"],
        "withdrawals": ["recorded_order"], "protocol_revisions": ["loaded_order"], "records": ["id"],
    ]
}
