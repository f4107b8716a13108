/// The HIPAA Safe Harbor generalizations: ZIP → 3 digits, ages ≥ 90 → `90+`, numeric bins.
package enum SafeHarbor {
    /// ZIP3 prefixes of areas with 20,000 people or fewer (2000 census, as HHS lists them):
    /// these become `000`.
    package static let restrictedZIP3: Set<String> = [
        "036", "059", "063", "102", "203", "556", "692", "790", "821", "823", "830", "831", "878", "879", "884", "890", "893",
    ]

    /// The top age band: every age from 90 on falls in it, whatever the bins say.
    package static let topAgeBand = "90+"

    /// The first three digits of a US ZIP code (`12345`, `12345-6789`), `000` for restricted
    /// prefixes, or nil when `zip` does not start with three digits.
    package static func zip3(_ zip: String) -> String? {
        let digits = zip.unicodeScalars.prefix { $0 != "-" }.filter { $0 != " " }
        guard digits.count >= 3 else { return nil }
        let prefix = String(String.UnicodeScalarView(digits.prefix(3)))
        guard prefix.unicodeScalars.allSatisfy({ $0.value >= 48 && $0.value <= 57 }) else { return nil }
        return restrictedZIP3.contains(prefix) ? "000" : prefix
    }

    /// The band of `age` under `bins` (lower edges, ascending; default decades): `90+` for 90 and
    /// over, `<18` below the first edge, `30–<45` between edges, `65–<90` above the last edge.
    package static func ageBand(_ age: Int, bins: [Double]?) -> String {
        if age >= 90 { return topAgeBand }
        let edges = (bins ?? [10, 20, 30, 40, 50, 60, 70, 80]).filter { $0 < 90 } + [90]
        return label(Double(age), edges: edges)
    }

    /// The bin label of `value` under the ascending `edges`: `<a`, `a–<b`, or `≥z`.
    public static func label(_ value: Double, edges: [Double]) -> String {
        let sorted = Array(Set(edges)).sorted()
        guard let first = sorted.first, let last = sorted.last else { return "all" }
        if value < first { return "<" + format(first) }
        if value >= last { return "≥" + format(last) }
        var lower = first
        for edge in sorted.dropFirst() {
            if value < edge { return format(lower) + "–<" + format(edge) }
            lower = edge
        }
        return "≥" + format(last)
    }

    /// `5` for 5.0, `2.5` for 2.5.
    static func format(_ value: Double) -> String {
        if value == value.rounded(), abs(value) < 1e15 { return String(Int(value)) }
        return String(value)
    }
}
