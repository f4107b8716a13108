import CohortCore
import CohortIO
import Foundation
import Testing

@testable import CohortDeid

/// The scan of files as they are written gives exactly what a scan of the same files read back
/// gives (findings with their lines, fields and hashes; counts), whatever the cut of the writes,
/// and a file that changed after its writer closed it is read, not taken from the writes.
struct WrittenFileScanTests {
    static let roster = PlantedRoster.participants + Fixtures.roster(count: 40, seed: 9)

    let directory: URL
    var data: URL { directory.appendingPathComponent("data", isDirectory: true) }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("written-scan-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("data/fhir"), withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: directory) }

    /// Export-like files with planted identifiers: a CSV with quoted cells that span lines and
    /// CRLF line ends, NDJSON with escaped strings, a JSON text over several lines, a text file
    /// whose last line has no end, an empty file, and a fixed-text file (skipped by both).
    static func files(seed: UInt64) -> [(path: String, bytes: [UInt8])] {
        var g = ScanTextGenerator(roster: roster, seed: seed)
        var csv = "participant,kind,note\r\n"
        var ndjson = "", json = "{\n  \"entries\": [\n", text = ""
        for row in 0..<400 {
            let note = g.line().replacingOccurrences(of: "\"", with: "\"\"")
            let cell = g.chance(20) ? "\"\(note)\nsecond line \(g.line().replacingOccurrences(of: "\"", with: "\"\""))\"" : "\"\(note)\""
            csv += "P\(row),symptom,\(cell)" + (g.chance(50) ? "\r\n" : "\n")
            ndjson += g.jsonEscaped(g.line()) + "\n"
            json += "    " + g.jsonEscaped(g.line()) + (row < 399 ? ",\n" : "\n")
            text += g.line() + (row < 399 ? "\n" : "")
        }
        json += "  ]\n}\n"
        return [
            ("data/csv/records.csv", Array(csv.utf8)), ("data/json/records.ndjson", Array(ndjson.utf8)),
            ("data/fhir/Bundle.json", Array(json.utf8)), ("data/notes.txt", Array(text.utf8)), ("data/empty.csv", []),
            ("data/codebook.csv", Array("column,meaning\nnote,José García\n".utf8)),
        ]
    }

    /// Writes `files` to disk and through `scan`'s taps in pieces of random sizes (1 byte to
    /// 3 KiB, so line ends, CRLF pairs and UTF-8 sequences fall across pieces).
    func write(_ files: [(path: String, bytes: [UInt8])], through scan: WrittenFileScan, seed: UInt64) throws {
        var g = SeededRandom(seed: seed)
        let taps = scan.taps
        for file in files {
            let url = directory.appendingPathComponent(file.path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(file.bytes).write(to: url)
            guard let tap = taps.tap(for: file.path) else { continue }
            var offset = 0
            while offset < file.bytes.count {
                let n = min(file.bytes.count - offset, 1 + Int(g.next() % (g.next() % 2 == 0 ? 8 : 3_072)))
                file.bytes[offset..<offset + n].withUnsafeBytes { tap.wrote($0) }
                offset += n
            }
            let identity = try #require(FileIdentity(path: url.path))
            tap.closed(identity: identity)
        }
        scan.finishWriting()
    }

    @Test(arguments: [1 as UInt64, 2, 3])
    func sameResultAsTheFilesReadBack(seed: UInt64) throws {
        defer { cleanUp() }
        let scanner = ResidualScanner(roster: Self.roster, threads: 2)
        let scan = WrittenFileScan(scanner: scanner)
        try write(Self.files(seed: seed), through: scan, seed: seed)
        #expect(scan.count == 5)  // not the fixed-text codebook
        let read = try scanner.scan(directory: data)
        let merged = try scanner.scan(directory: data, written: scan)
        #expect(read.findings.count > 50)
        #expect(read.filesScannedAsWritten == 0)
        #expect(merged.filesScannedAsWritten == 5)
        #expect(merged.findings == read.findings)
        #expect(merged.filesScanned == read.filesScanned && merged.filesSkipped == read.filesSkipped)
        #expect(merged.valuesScanned == read.valuesScanned && merged.freeTextValues == read.freeTextValues)
        // Each file on its own too (a file's result is not a merge artefact).
        for file in Self.files(seed: seed) where file.path != "data/codebook.csv" {
            let relative = String(file.path.dropFirst("data/".count))
            let one = try scanner.scanResult(files: [data.appendingPathComponent(relative)])
            let written = try #require(scan.result(for: relative, identity: FileIdentity(path: data.appendingPathComponent(relative).path)))
            #expect(written.values == one.valuesScanned, "\(relative)")
            #expect(written.findings.reduce(0) { $0 + $1.mask.nonzeroBitCount } == one.findings.count, "\(relative)")
        }
    }

    @Test func aFileChangedAfterItsWriterClosedItIsReadBack() throws {
        defer { cleanUp() }
        let scanner = ResidualScanner(roster: Self.roster, threads: 1)
        let scan = WrittenFileScan(scanner: scanner)
        let files: [(path: String, bytes: [UInt8])] = [
            ("data/a.csv", Array("participant,note\nP1,fine\n".utf8)), ("data/b.csv", Array("participant,note\nP2,ok\n".utf8)),
        ]
        try write(files, through: scan, seed: 7)
        #expect(try scanner.scan(directory: data, written: scan).findings.isEmpty)
        // A name appended after close: the written result no longer describes the file.
        let handle = try FileHandle(forWritingTo: data.appendingPathComponent("b.csv"))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("P3,José García called\n".utf8))
        try handle.close()
        let merged = try scanner.scan(directory: data, written: scan)
        #expect(merged.filesScannedAsWritten == 1)
        #expect(merged.findings.rosterOnly.map { "\($0.file):\($0.line):\($0.kind.rawValue)" } == ["b.csv:3:name"])
        #expect(merged.findings == (try scanner.scan(directory: data)).findings)
    }

    @Test func cancelledBeforeTheFilesCloseLeavesNoResult() throws {
        defer { cleanUp() }
        let scanner = ResidualScanner(roster: Self.roster, threads: 2)
        let scan = WrittenFileScan(scanner: scanner)
        let url = data.appendingPathComponent("c.ndjson")
        let bytes = Array("{\"note\":\"José García\"}\n".utf8)
        try Data(bytes).write(to: url)
        let tap = try #require(scan.taps.tap(for: "data/c.ndjson"))
        bytes.withUnsafeBytes { tap.wrote($0) }
        scan.cancel()
        tap.closed(identity: try #require(FileIdentity(path: url.path)))
        #expect(scan.count == 0)
        let merged = try scanner.scan(directory: data, written: scan)
        #expect(merged.filesScannedAsWritten == 0)
        #expect(merged.findings.rosterOnly.map(\.kind) == [.name])
    }
}
