@testable import CohortImport
import CohortCore
import Foundation
import Testing

struct ZipArchiveTests {
    static func temp(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("zip-\(UUID().uuidString).zip").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func readAll(_ archive: ZipArchive, _ entry: ZipArchive.Entry) throws -> [UInt8] {
        var out: [UInt8] = []
        try archive.read(entry) { out += $0 }
        return out
    }

    /// A member larger than one 256 KiB chunk, so inflate runs over several reads.
    static let big: [UInt8] = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }

    @Test(arguments: [false, true])
    func readsStoredAndDeflatedMembers(zip64: Bool) throws {
        let path = try Self.temp(
            ZipFixture.make(
                [.init(path: "apple_health_export/", bytes: [], deflate: false), .init(path: "apple_health_export/export.xml", bytes: Self.big),
                    .init(path: "apple_health_export/export_cda.xml", bytes: Array("<ClinicalDocument/>".utf8), deflate: false)], zip64: zip64))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let archive = try ZipArchive(path: path)
        #expect(archive.entries.map(\.path) == ["apple_health_export/", "apple_health_export/export.xml", "apple_health_export/export_cda.xml"])
        #expect(archive.entries[0].isDirectory)
        #expect(archive.entries[1].uncompressedSize == UInt64(Self.big.count))
        #expect(try Self.readAll(archive, archive.entries[1]) == Self.big)
        #expect(try Self.readAll(archive, archive.entries[2]) == Array("<ClinicalDocument/>".utf8))
    }

    @Test func truncatedArchiveIsAnErrorNamingTheFile() throws {
        let whole = ZipFixture.make([.init(path: "export.xml", bytes: Self.big)])
        // Cut in the middle of the member's data: no end record is left.
        let path = try Self.temp(Array(whole[0..<(whole.count / 2)]))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = try #require(throws: CohortError.self) { _ = try ZipArchive(path: path) }
        #expect(error.message.contains("truncated"))
        #expect(error.location?.file == path)
    }

    @Test func damagedMemberFailsItsChecksum() throws {
        var bytes = ZipFixture.make([.init(path: "export.xml", bytes: Array(repeating: 0x41, count: 1000), deflate: false)])
        bytes[30 + "export.xml".utf8.count + 10] = 0x42  // one byte of the stored data
        let path = try Self.temp(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let archive = try ZipArchive(path: path)
        let error = try #require(throws: CohortError.self) { _ = try Self.readAll(archive, archive.entries[0]) }
        #expect(error.message.contains("checksum"))
    }

    @Test func directoryPointingPastTheEndIsRefused() throws {
        var bytes = ZipFixture.make([.init(path: "export.xml", bytes: Self.big)])
        // Drop 100 bytes before the central directory: offsets now point past it.
        let cut = bytes.count - 22 - 46 - "export.xml".utf8.count
        bytes.removeSubrange((cut - 100)..<cut)
        let path = try Self.temp(bytes)
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(throws: CohortError.self) {
            let archive = try ZipArchive(path: path)
            _ = try Self.readAll(archive, archive.entries[0])
        }
    }
}
