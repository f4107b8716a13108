/// RFC 4180 text: fields quoted when they contain a comma, a quote, CR or LF, inner quotes
/// doubled, records ended by CRLF.
public enum CSVText {
    /// `field` as one CSV field.
    public static func field(_ field: String) -> String {
        let needsQuotes = field.utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }
        guard needsQuotes else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// One CSV record, CRLF included.
    public static func record(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }
}
