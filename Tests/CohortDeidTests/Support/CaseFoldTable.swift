import Foundation

/// The key each Unicode scalar folds to on its own, read from `Fixtures/case-folds.txt`, which
/// `scripts/generate-case-folds.py` computes with Python's `unicodedata` (full case folding,
/// NFD without combining marks, letters and digits kept): an oracle that shares no code with
/// `TextTokenizer.fold` (Foundation's folding).
struct CaseFoldTable: Sendable {
    /// The Unicode version the table was computed from.
    let unicodeVersion: String
    /// Scalars (by value) that fold to something else than themselves; "" for nothing.
    private let changed: [UInt32: String]
    /// Runs of scalars that fold to themselves.
    private let identity: [ClosedRange<UInt32>]
    /// Runs of scalars (first, last) that fold to nothing, sorted.
    private let dropped: [ClosedRange<UInt32>]

    static let shared: CaseFoldTable = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/case-folds.txt")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { fatalError("cannot read \(url.path)") }
        return CaseFoldTable(text)
    }()

    init(_ text: String) {
        var version = ""
        var changed: [UInt32: String] = [:]
        var identity: [ClosedRange<UInt32>] = []
        var dropped: [ClosedRange<UInt32>] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#") {
                version = line.split(separator: " ").first { $0.first?.isNumber == true && $0.contains(".") }.map(String.init) ?? ""
                continue
            }
            let parts = line.split(separator: "\t", omittingEmptySubsequences: false)
            let bounds = parts[0].components(separatedBy: "..").compactMap { UInt32($0, radix: 16) }
            let range = bounds[0]...(bounds.count > 1 ? bounds[1] : bounds[0])
            switch parts[1] {
            case "=": identity.append(range)
            case "-": dropped.append(range)
            default:
                var key = String.UnicodeScalarView()
                for hex in parts[1].split(separator: " ") { if let v = UInt32(hex, radix: 16), let s = Unicode.Scalar(v) { key.append(s) } }
                changed[range.lowerBound] = String(key)
            }
        }
        self.unicodeVersion = version
        self.changed = changed
        self.identity = identity
        self.dropped = dropped
    }

    /// The key of `scalar` on its own, nil when the table's Unicode version does not assign it.
    func key(_ scalar: Unicode.Scalar) -> String? {
        let v = scalar.value
        if let key = changed[v] { return key }
        if Self.contains(identity, v) { return String(scalar) }
        if Self.contains(dropped, v) { return "" }
        return nil
    }

    /// Every scalar the table assigns, with its key.
    func forEach(_ body: (Unicode.Scalar, String) -> Void) {
        for (v, key) in changed { if let s = Unicode.Scalar(v) { body(s, key) } }
        for run in identity { for v in run { if let s = Unicode.Scalar(v) { body(s, String(s)) } } }
        for run in dropped { for v in run { if let s = Unicode.Scalar(v) { body(s, "") } } }
    }

    private static func contains(_ runs: [ClosedRange<UInt32>], _ v: UInt32) -> Bool {
        var low = 0
        var high = runs.count
        while low < high {
            let mid = (low + high) / 2
            if runs[mid].upperBound < v { low = mid + 1 } else { high = mid }
        }
        return low < runs.count && runs[low].contains(v)
    }
}
