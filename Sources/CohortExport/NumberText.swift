/// Numbers as exports write them: the shortest text that reads back to the same `Double`,
/// integers without `.0`, and never an exponent (spreadsheets and R read `0.00001` the same
/// everywhere; `1e-05` they do not).
enum NumberText {
    /// The plain decimal text of `value` (empty for NaN and infinities, which no record holds).
    static func format(_ value: Double) -> String {
        guard value.isFinite else { return "" }
        if value == 0 { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        let text = value.description
        guard let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }),
            let exponent = Int(text[text.index(after: e)...])
        else { return text }
        var mantissa = Substring(text[..<e])
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa = mantissa.dropFirst() }
        let point = mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) } ?? mantissa.count
        let digits = Array(mantissa.filter { $0 != "." })
        let newPoint = point + exponent
        var result: String
        if newPoint <= 0 {
            result = "0." + String(repeating: "0", count: -newPoint) + String(digits)
        } else if newPoint >= digits.count {
            result = String(digits) + String(repeating: "0", count: newPoint - digits.count)
        } else {
            result = String(digits[..<newPoint]) + "." + String(digits[newPoint...])
        }
        return negative ? "-" + result : result
    }
}
