import Foundation
import Testing

@testable import CohortImport

struct JSONSyntaxTests {
    static func problem(_ text: String) -> (line: Int, column: Int, expected: String)? {
        Array(text.utf8).withUnsafeBufferPointer { b in
            JSONSyntax.firstProblem(b).map { p in
                let position = JSONSyntax.position(of: p.offset, in: b)
                return (position.line, position.column, p.expected)
            }
        }
    }

    @Test(arguments: [
        "[]", "{}", " [1, -2.5e3, 0, \"a\\u00e9\\n\", true, false, null, {\"k\": [{}]}] ", "\u{FEFF}[1]", "\"Zoë\"", "-0.0",
    ])
    func wellFormedTextHasNoProblemAndJSONSerializationAgrees(_ text: String) throws {
        #expect(Self.problem(text) == nil)
        #expect(throws: Never.self) { _ = try JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed]) }
    }

    @Test(arguments: [
        ("[{\"a\": 1},\n {\"b\": tru}]", 2, 8, "a value"),
        ("[1,\n2,\n,3]", 3, 1, "a value"),
        ("{\"a\" 1}", 1, 6, "':'"),
        ("{\"a\": 1 \"b\": 2}", 1, 9, "',' or '}'"),
        ("[1 2]", 1, 4, "',' or ']'"),
        ("[1] x", 1, 5, "nothing after"),
        ("[\"Zoë O'Brien\", \"open", 1, 17, "closing"),
        ("[\"tab\there\"]", 1, 6, "control character"),
        ("[\"bad \\x escape\"]", 1, 7, "escape"),
        ("[01]", 1, 3, "',' or ']'"),
        ("[1.]", 1, 2, "a number"),
        ("[{\"a\":", 1, 7, "ends early"),
        ("", 1, 1, "ends early"),
    ] as [(String, Int, Int, String)])
    func brokenTextNamesLineColumnAndWhatWasExpected(_ text: String, _ line: Int, _ column: Int, _ expected: String) throws {
        let found = try #require(Self.problem(text))
        #expect(found.line == line && found.column == column, "\(found)")
        #expect(found.expected.contains(expected), "\(found.expected)")
        // Foundation's parser, an independent judge, refuses the text too (it throws its CocoaError).
        #expect(throws: CocoaError.self) { _ = try JSONSerialization.jsonObject(with: Data(text.utf8)) }
    }

    @Test func invalidUTF8AndDeepNestingAreProblemsNotCrashes() throws {
        let bad: [UInt8] = Array("[\"a".utf8) + [0xC3, 0x28] + Array("\"]".utf8)
        let utf8 = bad.withUnsafeBufferPointer { JSONSyntax.firstProblem($0) }
        #expect(utf8?.offset == 3 && utf8?.expected == "text in UTF-8")
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let nesting = try #require(Self.problem(deep))
        #expect(nesting.column == JSONSyntax.maxDepth + 1 && nesting.expected.contains("no deeper"))
        #expect(Self.problem(String(repeating: "[", count: 512) + String(repeating: "]", count: 512)) == nil)
    }
}
