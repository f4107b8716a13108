import Foundation
import Testing

@testable import CohortImport

struct NDJSONLineParserTests {
    /// The fields the fast parser reads from `line`, nil when it declines the line.
    static func fast(_ line: String) -> [String: String]? {
        var parser = NDJSONLineParser()
        var result: [String: String]?
        let bytes = Array(line.utf8)
        bytes.withUnsafeBufferPointer { buffer in
            _ = parser.parse(buffer) { fields in
                var dictionary: [String: String] = [:]
                for column in RecordFields.Column.allCases {
                    if let value = fields.string(column) { dictionary[column.name] = value }
                }
                result = dictionary
            }
        }
        return result
    }

    /// What the JSONSerialization path reads from `line`.
    static func reference(_ line: String) throws -> [String: String] {
        try RowSource.fields(of: try JSONSerialization.jsonObject(with: Data(line.utf8)), file: "t.ndjson", line: 1)
    }

    static let accepted = [
        #"{"participant":"P-0001","kind":"heart_rate","start":"2026-10-02T08:30:00+02:00","value":72,"unit":"/min","source":"watch"}"#,
        #" { "participant" : "P-0001" , "kind":"heart_rate", "start":"2026-10-02T08:30:00", "value" : 72.5 }  "#,
        "{\"participant\":\"P-0001\",\t\"value\":-3.25,\"note\":null,\"text\":\"\"}\r",
        #"{"participant":"P-0001","value":0.1,"end":"2026-10-02"}"#,
        #"{"participant":"P-0001","value":"1.50","unit":"h"}"#,
        #"{"participant":12,"kind":"pain","value":-7}"#,
        #"{"value":123456789012345678}"#,
        #"{"value":-0.5}"#,
        #"{"value":100.10}"#,
        #"{"value":12345678.123456789}"#,
        "{}",
    ]

    @Test(arguments: accepted)
    func plainLinesReadAsJSONSerializationReadsThem(line: String) throws {
        let fast = try #require(Self.fast(line))
        let reference = try Self.reference(line)
        #expect(Set(fast.keys) == Set(reference.keys))
        for (key, value) in reference {
            if key == "value" {
                // Decimals keep their own spelling; the number they spell is the same.
                #expect(Double(fast[key] ?? "") == Double(value), "\(key)")
            } else {
                #expect(fast[key] == value, "\(key)")
            }
        }
    }

    static let declined = [
        #"{"participant":"P-0001","note":"say \"hi\""}"#,  // escapes
        #"{"participant":"P-0001","note":"Zoë"}"#,  // non-ASCII text
        #"{"value":1e2}"#,  // exponent
        #"{"value":true}"#,
        #"{"value":[1]}"#,
        #"{"value":{"a":1}}"#,
        #"{"participant":"P-0001","participant":"P-0002"}"#,  // duplicate key
        #"{"strat":"2026-10-02"}"#,  // unknown key
        #"{"value":-0}"#,  // reads as 0
        #"{"value":1234567890123456789}"#,  // more than 18 digits
        #"{"value":1.23456789012345678}"#,  // more than 17 digits
        #"{"text":1.5}"#,  // a decimal outside `value`
        #"{"value":01}"#,
        #"{"value":1.}"#,
        #"{"value":72"#,
        #"{"value":72}x"#,
        #"{"value":72,}"#,
        "[1,2]",
        "\"text\"",
        "",
    ]

    @Test(arguments: declined)
    func anythingElseIsLeftToJSONSerialization(line: String) {
        #expect(Self.fast(line) == nil)
    }
}
