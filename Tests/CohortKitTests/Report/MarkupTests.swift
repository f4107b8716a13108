import Testing

@testable import CohortKit

struct MarkupTests {
    @Test(arguments: [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("\" onload=\"x", "&quot; onload=&quot;x"),
        ("O'Brien & Sons", "O&#39;Brien &amp; Sons"),
        ("nul\u{0}bell\u{7}", "nul\u{FFFD}bell\u{FFFD}"),
        ("Zoë\ttab", "Zoë\ttab"),
    ])
    func escapesMarkupCharactersAndForbiddenControls(input: String, expected: String) {
        #expect(Markup.escape(input) == expected)
    }

    @Test func interpolatedTextIsEscapedAndMarkupIsNot() {
        let hostile = "</td><img src=x onerror=alert(1)>"
        let cell: Markup = "<td>\(hostile)</td>"
        #expect(cell.html == "<td>&lt;/td&gt;&lt;img src=x onerror=alert(1)&gt;</td>")
        let row: Markup = "<tr>\(cell)\([cell, cell])</tr>"
        #expect(row.html == "<tr>" + String(repeating: cell.html, count: 3) + "</tr>")
        let number: Markup = "\(3)/\(2.456, digits: 1)/\(Double.nan, digits: 1)"
        #expect(number.html == "3/2.5/0")
    }
}
