import Foundation
import Testing

import CohortCore
@testable import CohortIO

struct CSVReaderTests {
    /// Every row of `text` read with `chunkSize`.
    static func rows(_ bytes: [UInt8], chunkSize: Int = 1 << 18) throws -> [CSVRow] {
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("input.csv")
            try Data(bytes).write(to: url)
            let reader = try CSVReader(url: url, chunkSize: chunkSize)
            var rows: [CSVRow] = []
            while let row = try reader.next() { rows.append(row) }
            return rows
        }
    }

    static func rows(_ text: String, chunkSize: Int = 1 << 18) throws -> [CSVRow] { try rows(Array(text.utf8), chunkSize: chunkSize) }

    /// The error reading `text` fails with.
    static func failure(_ text: String, chunkSize: Int = 1 << 18) -> CohortError? {
        #expect(throws: CohortError.self) { _ = try rows(text, chunkSize: chunkSize) }
    }

    static let chunkSizes = [1, 2, 3, 7, 1 << 18]

    @Test(arguments: chunkSizes)
    func quotedFieldsWithCommasAndDoubledQuotes(chunkSize: Int) throws {
        let rows = try Self.rows("id,note,n\n1,\"a, b, and c\",2\n2,\"say \"\"hi\"\"\",3\n3,\"\",\"\"\"\"\n", chunkSize: chunkSize)
        #expect(rows.map(\.fields) == [
            ["id", "note", "n"], ["1", "a, b, and c", "2"], ["2", "say \"hi\"", "3"], ["3", "", "\""],
        ])
        #expect(rows.map(\.line) == [1, 2, 3, 4])
    }

    @Test(arguments: chunkSizes)
    func embeddedLineBreaksKeepLaterLineNumbersRight(chunkSize: Int) throws {
        let text = "id,note,x\r\n1,\"line one\r\nline two\r\nline three\",a\r\n2,plain,b\r\n3,\"lf\nonly\",c\n4,end,d"
        let rows = try Self.rows(text, chunkSize: chunkSize)
        #expect(rows.map(\.fields) == [
            ["id", "note", "x"], ["1", "line one\r\nline two\r\nline three", "a"], ["2", "plain", "b"], ["3", "lf\nonly", "c"],
            ["4", "end", "d"],
        ])
        #expect(rows.map(\.line) == [1, 2, 5, 6, 8])
    }

    @Test(arguments: chunkSizes)
    func byteOrderMarkIsSkipped(chunkSize: Int) throws {
        let rows = try Self.rows([0xEF, 0xBB, 0xBF] + Array("id,name\n1,Zoë\n".utf8), chunkSize: chunkSize)
        #expect(rows.first?.fields == ["id", "name"])
        #expect(rows.last?.fields == ["1", "Zoë"])
        #expect(rows.map(\.line) == [1, 2])
    }

    @Test func lfCRLFAndMissingFinalNewlineReadTheSame() throws {
        let lf = try Self.rows("a,b\n1,2\n3,4\n")
        let crlf = try Self.rows("a,b\r\n1,2\r\n3,4\r\n")
        let unterminated = try Self.rows("a,b\r\n1,2\n3,4")
        #expect(lf.map(\.fields) == [["a", "b"], ["1", "2"], ["3", "4"]])
        #expect(crlf.map(\.fields) == lf.map(\.fields))
        #expect(unterminated.map(\.fields) == lf.map(\.fields))
        #expect(crlf.map(\.line) == [1, 2, 3])
    }

    @Test(arguments: chunkSizes)
    func blankLinesAreSkippedButCounted(chunkSize: Int) throws {
        let rows = try Self.rows("\na\n\nb\r\n\r\n\r\nc\n\n", chunkSize: chunkSize)
        #expect(rows.map(\.fields) == [["a"], ["b"], ["c"]])
        #expect(rows.map(\.line) == [2, 4, 7])
    }

    @Test func emptyFieldsAndEmptyFile() throws {
        #expect(try Self.rows(",,\n").map(\.fields) == [["", "", ""]])
        #expect(try Self.rows("").isEmpty)
        #expect(try Self.rows([0xEF, 0xBB, 0xBF]).isEmpty)
        #expect(try Self.rows("\n\r\n").isEmpty)
    }

    @Test(arguments: chunkSizes)
    func unclosedQuoteNamesTheLineWhereTheFieldStarts(chunkSize: Int) {
        let error = Self.failure("a,b\nc,d\ne,\"open\nmore\nstill open\n", chunkSize: chunkSize)
        #expect(error?.code == .invalidInput)
        #expect(error?.location?.line == 3)
        #expect(error?.location?.file?.hasSuffix("input.csv") == true)
        #expect(error?.message.contains("not closed") == true)
    }

    @Test(arguments: chunkSizes)
    func quoteInsideAnUnquotedFieldIsAnError(chunkSize: Int) {
        let error = Self.failure("a,b\n1,\"two\nlines\",x\nc,d\"e\n", chunkSize: chunkSize)
        #expect(error?.code == .invalidInput)
        #expect(error?.location?.line == 4)
        #expect(error?.message.contains("quote appears inside an unquoted field") == true)
    }

    @Test(arguments: chunkSizes)
    func textAfterAClosingQuoteIsAnError(chunkSize: Int) {
        let error = Self.failure("a,b\n\"x\"y,z\n", chunkSize: chunkSize)
        #expect(error?.code == .invalidInput)
        #expect(error?.location?.line == 2)
        #expect(error?.message.contains("text follows a closing quote") == true)
    }

    @Test func errorsNeverQuoteTheFieldValue() {
        let error = Self.failure("name\n\"Jane Doe\"secret\n")
        #expect(error.map { !$0.description.contains("Jane") && !$0.description.contains("secret") } == true)
    }

    @Test func missingFileIsNotFound() {
        let error = #expect(throws: CohortError.self) { _ = try CSVReader(url: URL(fileURLWithPath: "/nonexistent/cohort.csv")) }
        #expect(error?.code == .notFound)
    }

    @Test func readsALargeFileInSmallChunks() throws {
        var generator = SeededRandom(seed: 42)
        var bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("participant,kind,start,value,note\r\n".utf8)
        var expected: [(line: Int, fields: [String])] = [(1, ["participant", "kind", "start", "value", "note"])]
        var line = 2
        let notes = ["", "plain", "with, comma", "say \"ok\"", "two\r\nlines", "three\nshort\nlines", "Zoë ☀️ 😀", "\"", ","]
        while bytes.count < 5_000_000 {
            let n = Int(generator.next() % 1_000_000)
            let note = notes[Int(generator.next() % UInt64(notes.count))]
            let fields = ["P-\(n % 997)", n % 2 == 0 ? "pain" : "steps", "2025-03-\(10 + n % 19)T08:00:00Z", String(n), note]
            let quoted = note.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r\n" }) || n % 5 == 0
            let noteText = quoted ? "\"" + note.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : note
            let row = fields.dropLast().joined(separator: ",") + "," + noteText + (n % 3 == 0 ? "\n" : "\r\n")
            bytes += Array(row.utf8)
            expected.append((line, fields))
            line += 1 + note.utf8.filter { $0 == 0x0A }.count
            if n % 101 == 0 {
                bytes += Array("\r\n".utf8)  // a blank line
                line += 1
            }
        }
        let rows = try Self.rows(bytes, chunkSize: 7)
        #expect(rows.count == expected.count)
        var mismatches = 0
        for (row, want) in zip(rows, expected) where row.line != want.line || row.fields != want.fields {
            Issue.record("line \(row.line): expected line \(want.line) \(want.fields), got \(row.fields)")
            mismatches += 1
            if mismatches > 3 { break }
        }
    }
}

struct CSVReaderByteRowTests {
    @Test(arguments: CSVReaderTests.chunkSizes)
    func advanceGivesTheSameFieldsAsNextWithoutStrings(chunkSize: Int) throws {
        let text = "\u{FEFF}a,b,c\r\n1,\"x, \"\"y\"\"\",\n\n,\"two\nlines\",Zoë\n3,,last"
        let expected = try CSVReaderTests.rows(text, chunkSize: chunkSize)
        try withTemporaryDirectory { directory in
            let url = directory.appendingPathComponent("input.csv")
            try Data(text.utf8).write(to: url)
            let reader = try CSVReader(url: url, chunkSize: chunkSize)
            var rows: [CSVRow] = []
            while try reader.advance() {
                let fields = reader.withCurrentRow { bytes, ends in
                    zip([0] + ends.dropLast(), ends).map { String(decoding: UnsafeBufferPointer(rebasing: bytes[$0..<$1]), as: UTF8.self) }
                }
                #expect(fields.count == reader.fieldCount)
                rows.append(CSVRow(line: reader.rowLine, fields: fields))
            }
            #expect(rows.map(\.fields) == expected.map(\.fields))
            #expect(rows.map(\.line) == expected.map(\.line))
            #expect(rows.map(\.line) == [1, 2, 4, 6])
        }
    }
}

extension CSVReaderTests {
    @Test(arguments: [1 << 10, 1 << 18])
    func oversizeFieldIsRefusedAtTheCapWithoutEchoingIt(chunkSize: Int) throws {
        // A 10 MB `kind` field: refused once the cap is passed, naming line and field position.
        let huge = String(repeating: "Zoë", count: 10_000_000 / 4)
        let error = Self.failure("participant,kind\nP-1,\(huge)\n", chunkSize: chunkSize)
        #expect(error?.location?.line == 2)
        #expect(error?.message == "field 2 is longer than 64 KiB")
        #expect(error.map { !$0.description.contains("Zoë") } == true)
        // A field exactly at the cap is read.
        let atCap = String(repeating: "x", count: CSVReader.maxFieldBytes)
        #expect(try Self.rows("a,b\n1,\(atCap)\n", chunkSize: chunkSize).last?.fields.last?.count == CSVReader.maxFieldBytes)
    }

    @Test func unclosedQuoteStopsAtTheCapNotAtTheEndOfTheFile() throws {
        // Without the cap the open quote swallows every later line and fails only at the end.
        let body = String(repeating: "P-1,pain,2026-01-01T00:00:00Z\n", count: 10_000)
        let error = Self.failure("a,b,c\n\"open,b,c\n" + body)
        #expect(error?.location?.line == 2)
        #expect(error?.message.contains("longer than 64 KiB") == true)
        #expect(error?.hint?.contains("quote left open") == true)
        // Doubled quotes count too.
        let quotes = Self.failure("a\n\"" + String(repeating: "\"\"", count: CSVReader.maxFieldBytes + 1) + "\"\n")
        #expect(quotes?.message.contains("longer than 64 KiB") == true)
    }

    @Test func rowOfManyFieldsIsCappedAtOneMebibyte() throws {
        let field = String(repeating: "y", count: 60_000)
        let row = Array(repeating: field, count: 20).joined(separator: ",")
        let error = Self.failure("h\n" + row + "\n")
        #expect(error?.message == "the row is longer than 1 MiB")
        #expect(error?.location?.line == 2)
    }
}
