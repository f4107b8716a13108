/// A fragment of HTML in which every interpolated `String` is escaped.
///
/// Report pages are assembled only from `Markup` literals: `"<td>\(code)</td>"` escapes `code`,
/// while `"<tr>\(cells)</tr>"` inserts already-built markup as is. A value from the store or an
/// archive (a study title, a study code, a file name from a manifest) therefore cannot open a
/// tag or an attribute, whatever it holds.
struct Markup: ExpressibleByStringInterpolation, Sendable, Hashable {
    /// The HTML text.
    private(set) var html: String

    /// Markup already known to be safe (built by this type or a fixed literal).
    init(raw html: String) { self.html = html }

    init(stringLiteral value: String) { html = value }

    init(stringInterpolation: StringInterpolation) { html = stringInterpolation.html }

    /// The fragments one after the other.
    init(_ parts: [Markup]) { html = parts.map(\.html).joined() }

    /// Escapes text for element content and double- or single-quoted attribute values:
    /// `& < > " '` become character references, and control characters HTML forbids (all of
    /// C0 but tab, line feed and carriage return, plus DEL and C1) become U+FFFD.
    static func escape(_ text: some StringProtocol) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            case "\t", "\n", "\r": out.unicodeScalars.append(scalar)
            case "\u{0}"..."\u{1F}", "\u{7F}"..."\u{9F}": out += "\u{FFFD}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Collects literals as they are and interpolated text escaped.
    struct StringInterpolation: StringInterpolationProtocol {
        var html = ""

        init(literalCapacity: Int, interpolationCount: Int) { html.reserveCapacity(literalCapacity + interpolationCount * 16) }

        mutating func appendLiteral(_ literal: String) { html += literal }

        /// Text: escaped.
        mutating func appendInterpolation(_ text: String) { html += Markup.escape(text) }

        /// Text: escaped.
        mutating func appendInterpolation(_ text: Substring) { html += Markup.escape(text) }

        /// Markup: as is.
        mutating func appendInterpolation(_ markup: Markup) { html += markup.html }

        /// Markup fragments: one after the other.
        mutating func appendInterpolation(_ parts: [Markup]) { for part in parts { html += part.html } }

        /// An integer, in decimal.
        mutating func appendInterpolation(_ number: Int) { html += String(number) }

        /// A number with `digits` decimals (`.` as separator), e.g. an SVG coordinate.
        mutating func appendInterpolation(_ number: Double, digits: Int) {
            html += number.isFinite ? Self.format(number, digits: digits) : "0"
        }

        static func format(_ number: Double, digits: Int) -> String {
            var scale = 1.0
            for _ in 0..<digits { scale *= 10 }
            let rounded = (number * scale).rounded() / scale
            if digits == 0 || rounded == rounded.rounded() { return String(Int(rounded)) }
            return String(rounded)
        }
    }
}
