import GRDB

// The record types shared with PostgreSQL (Sources/CohortStore/Rows) fetched through GRDB: each
// reads a GRDB `Row` through ``RowReader``, citing the row key messages name.

extension ParticipantRow: FetchableRecord, TableRecord {
    init(row: Row) throws { try self.init(RowReader(row, table: Self.databaseTableName, rowIDColumn: "pk")) }
}

extension ConsentRow: FetchableRecord, TableRecord {
    init(row: Row) throws { try self.init(RowReader(row, table: Self.databaseTableName)) }
}

extension WithdrawalRow: FetchableRecord, TableRecord {
    init(row: Row) throws { try self.init(RowReader(row, table: Self.databaseTableName)) }
}

extension AuditEventRow: FetchableRecord, TableRecord {
    init(row: Row) throws { try self.init(RowReader(row, table: Self.databaseTableName, rowIDColumn: "seq")) }
}

extension AuditCheckpointRow: FetchableRecord, TableRecord {
    init(row: Row) throws { try self.init(RowReader(row, table: Self.databaseTableName, rowIDColumn: "seq")) }
}
