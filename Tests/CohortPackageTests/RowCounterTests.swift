import CohortCore
import Testing

@testable import CohortPackage

struct RowCounterTests {
    private func count(_ path: String, _ text: String, chunk: Int = 3) throws -> Int? {
        guard var counter = RowCounter(path: path) else { return nil }
        let bytes = Array(text.utf8)
        // Feed in small chunks so state carries across chunk boundaries.
        var index = 0
        while index < bytes.count {
            counter.update(Array(bytes[index..<min(index + chunk, bytes.count)]))
            index += chunk
        }
        return try counter.finish()
    }

    @Test(arguments: [
        ("a,b\n1,2\n3,4\n", 2),
        ("a,b\n1,2\n3,4", 2),
        ("a,b\r\n1,\"x\r\ny\"\r\n", 1),
        ("a,b\n\"multi\nline\nvalue\",2\n", 1),
        ("a,b\n\"he said \"\"hi\"\"\nthere\",2\n3,4\n", 2),
        ("a,b\n", 0),
        ("", 0),
        ("a,b\n1,2\n\n", 1),
    ])
    func csvCountsRecordsMinusHeader(text: String, expected: Int) throws {
        #expect(try count("data/csv/x.csv", text) == expected)
    }

    @Test func csvEndingInsideQuotesIsRefused() {
        let refused = #expect(throws: CohortError.self) { try count("data/csv/x.csv", "a\n\"open\n") }
        #expect(refused?.code == .invalidInput, "an unterminated quote")
    }

    @Test(arguments: [("{}\n{}\n", 2), ("{}\n\n  \n{}", 2), ("", 0), ("{}\r\n", 1)])
    func ndjsonCountsNonEmptyLines(text: String, expected: Int) throws {
        #expect(try count("data/fhir/Patient.ndjson", text) == expected)
    }

    /// Random NDJSON-like bytes in random chunks: the count is the number of lines holding a
    /// byte other than space, tab or CR, counted here by splitting the whole text.
    @Test func ndjsonCountInChunksMatchesSplittingTheText() {
        var draws = Draws(seed: 0x28)
        let alphabet: [UInt8] = Array("{}a \t\r\n\n".utf8)
        for _ in 0..<400 {
            let bytes = (0..<draws.next(300)).map { _ in alphabet[draws.next(alphabet.count)] }
            let expected = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
                .filter { line in line.contains { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D } }.count
            #expect(draws.count(bytes, path: "data/json/x.ndjson", longestPiece: 40) == expected)
        }
    }

    /// Random CSV-like bytes (quotes, CR, LF, long quoted runs) in random chunks: the count and
    /// the refusal of an open quote are those of the RFC 4180 rule applied byte by byte, here.
    @Test func csvCountInChunksMatchesTheByteByByteRule() {
        var draws = Draws(seed: 0x4180)
        let alphabet: [UInt8] = Array("a,\"\"\r\n\nbb".utf8)
        for round in 0..<600 {
            let bytes = (0..<draws.next(round < 300 ? 60 : 2_000)).map { _ in alphabet[draws.next(alphabet.count)] }
            var inQuotes = false, hasContent = false, records = 0
            for byte in bytes {
                switch byte {
                case 0x22: inQuotes.toggle(); hasContent = true
                case 0x0A where !inQuotes: records += hasContent ? 1 : 0; hasContent = false
                case 0x0D where !inQuotes: break
                default: hasContent = true
                }
            }
            let expected: Int? = inQuotes ? nil : max(records + (hasContent ? 1 : 0) - 1, 0)
            let counted = draws.count(bytes, path: "data/csv/x.csv", longestPiece: round % 2 == 0 ? 7 : 300)
            #expect(counted == expected, "round \(round): \(bytes.count) bytes")
        }
    }

    @Test func bundleCountsEntries() throws {
        #expect(try count("data/fhir/bundles/P1.json", #"{"resourceType":"Bundle","entry":[{},{}]}"#) == 2)
        #expect(try count("data/fhir/bundles/P1.json", #"{"resourceType":"Bundle"}"#) == 0)
        let refused = #expect(throws: CohortError.self) { try count("data/fhir/bundles/P1.json", "[1,2]") }
        #expect(refused?.code == .invalidInput, "not a Bundle object")
    }

    @Test(arguments: [
        (#"{"entry":[]}"#, 0),
        (#"{"entry" : [ {"a":[1,2,{"entry":[9,9,9]}]} , "x" , 3 , null ] }"#, 4),
        (#"{"id":"a]},[\"entry\":[1,2]","entry":[{"s":"}]\\"},{}]}"#, 2),
        (#"{"meta":{"entry":[1,2,3]},"entry":[{}]}"#, 1),
        (#"{"entries":[1,2,3],"entr":[1],"entry":[[],[[]]]}"#, 2),
        ("\n{\n\"entry\":[\n{\"fullUrl\":\"urn:uuid:x\"},\n{}\n]}\n", 2),
    ])
    func bundleEntriesAreCountedByStructure(text: String, expected: Int) throws {
        for chunk in [1, 2, 7, 1000] {
            #expect(try count("data/fhir/bundles/P1.json", text, chunk: chunk) == expected)
        }
    }

    @Test(arguments: [
        #"{"entry":{"a":1}}"#, #"{"entry":"x"}"#, #"{"entry":null}"#, #"{"entry":[{}]"#, #"{"entry":[}]}"#,
        #"{"a":"unterminated}"#, #"{} {}"#, "", "   ", #""text""#,
    ])
    func malformedBundlesAreRefused(text: String) {
        let refused = #expect(throws: CohortError.self) { try count("data/fhir/bundles/P1.json", text) }
        #expect(refused?.code == .invalidInput, "a malformed Bundle")
    }

    @Test func largeBundleIsCountedInChunks() throws {
        guard var counter = RowCounter(path: "data/fhir/bundles/P9.json") else {
            Issue.record("bundle path not counted")
            return
        }
        counter.update(Array(#"{"resourceType":"Bundle","type":"collection","entry":["#.utf8))
        let entry = Array(#"{"fullUrl":"urn:uuid:0","resource":{"resourceType":"Observation","valueQuantity":{"value":72}}}"#.utf8)
        for index in 0..<300_000 {
            if index > 0 { counter.update([UInt8(ascii: ","), UInt8(ascii: "\n")]) }
            counter.update(entry)
        }
        counter.update(Array("]}\n".utf8))
        #expect(try counter.finish() == 300_000)
    }

    @Test func otherFilesAreNotCounted() throws {
        #expect(RowCounter(path: "data/json/records.json") == nil)
        #expect(RowCounter(path: "data/README.txt") == nil)
        #expect(RowCounter(path: "bag-info.txt") == nil)
    }
}

/// Seeded draws for the random-text tests, and a count of a text fed in random pieces.
private struct Draws {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    /// A draw in `0..<bound`.
    mutating func next(_ bound: Int) -> Int {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Int((state >> 33) % UInt64(bound))
    }

    /// `bytes` counted by the rule for `path`, fed in pieces of 1 to `longestPiece` bytes (nil
    /// when the rule refuses them).
    mutating func count(_ bytes: [UInt8], path: String, longestPiece: Int) -> Int? {
        guard var counter = RowCounter(path: path) else { return nil }
        var offset = 0
        while offset < bytes.count {
            let piece = min(bytes.count - offset, 1 + next(longestPiece))
            counter.update(Array(bytes[offset..<offset + piece]))
            offset += piece
        }
        return try? counter.finish()
    }
}
