import CohortCore
import CohortStore
import Testing

/// Issue 28: an export empties the page cache of the store's own connection before its write
/// stage (``StudyStore/releaseCachedMemory()``), which reads through connections of its own, so
/// the write's peak does not carry up to 2 MB of pages the earlier stages read (at bench L the
/// audit trail alone left 1.3 MB there). Measured on the connection itself
/// (`SQLITE_DBSTATUS_CACHE_USED`), not on the process, so other tests running at once do not move it.
struct StoreCachedMemoryTests {
    @Test func releasingEmptiesTheConnectionsPageCache() throws {
        try withStoreFixture { fixture in
            let (store, p) = try StudyStorePrivacyTests.enrolled(fixture)
            let records = (0..<2_000).map { StudyStorePrivacyTests.note(p.participant, minute: Int64($0), $0 % 50 == 0 ? "a note" : nil) }
            _ = try StudyStoreTests.importRecords(store, records, pk: p.handle, file: "a.csv")
            let sqlite = try #require(store as? SQLiteStudyStore)
            sqlite.releaseCachedMemory()
            let empty = try sqlite.cachedBytes()
            // Read through the store's connection: every table's rows counted, records too.
            _ = try store.counts()
            let filled = try sqlite.cachedBytes()
            #expect(filled > empty + 64 * 1024, "reading the tables fills the page cache: \(empty) → \(filled) bytes")
            sqlite.releaseCachedMemory()
            let released = try sqlite.cachedBytes()
            #expect(released <= empty, "releasing gives the pages back: \(filled) → \(released) bytes (empty: \(empty))")
            #expect(try store.counts()["records"] == 2_000, "the store reads as before after a release")
        }
    }
}
