package import Foundation
import CohortCore
import CohortCrypto
import CohortIO

/// Counts the rows of a payload file, fed in chunks, for the export manifest and for
/// verification.
///
/// - `.csv`: RFC 4180 records minus the header row. A line break inside a quoted field does not
///   end a record; CRLF and LF both end one; blank lines are not records.
/// - `.ndjson`: lines that contain anything other than white space.
/// - `data/fhir/bundles/….json`: the number of items in the Bundle's `entry` array (0 when it
///   has none), found by a streaming scan of the JSON structure (``BundleEntryCounter``), so a
///   bundle of any size is counted in constant memory.
/// - anything else: not counted (``init(path:)`` returns nil).
package struct RowCounter: Sendable {
    /// How a file's rows are counted.
    package enum Kind: String, Sendable, Codable {
        case csv
        case ndjson
        case fhirBundle = "fhir_bundle"
    }

    /// The rule for `path` (bag-relative, `/`-separated), or nil when such files are not counted.
    public static func kind(forPath path: String) -> Kind? {
        let lower = path.lowercased()
        if lower.hasSuffix(".csv") { return .csv }
        if lower.hasSuffix(".ndjson") { return .ndjson }
        if path.hasPrefix("data/fhir/bundles/"), lower.hasSuffix(".json") { return .fhirBundle }
        return nil
    }

    /// The rule in use.
    public let kind: Kind
    private let path: String
    // CSV state.
    private var inQuotes = false
    private var recordHasContent = false
    // CSV and NDJSON: completed records / non-empty lines.
    private var count = 0
    // NDJSON state.
    private var lineHasContent = false
    // FHIR bundle state.
    private var bundle = BundleEntryCounter()

    /// A counter for the file at bag-relative `path`, or nil when such files are not counted.
    package init?(path: String) {
        guard let kind = Self.kind(forPath: path) else { return nil }
        self.kind = kind
        self.path = path
    }

    /// Adds the next bytes of the file.
    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        switch kind {
        case .csv:
            countRecords(bytes)
        case .ndjson:
            countLines(bytes)
        case .fhirBundle:
            bundle.update(bytes)
        }
    }

    /// CSV: a record ends at a line feed outside quotes, and counts when it had content; a quote
    /// toggles quoting. Once a record has content only quotes and its line's end matter, and
    /// inside quotes only the closing quote: each is found with `memchr` rather than byte by byte
    /// (every byte is looked at a bounded number of times, however many quotes a line holds).
    private mutating func countRecords(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count
        func find(_ byte: UInt8, from start: Int, to end: Int) -> Int? {
            guard start < end, let found = memchr(base + start, Int32(byte), end - start) else { return nil }
            return base.distance(to: UnsafeRawPointer(found))
        }
        var index = 0
        var lineEnd = -1  // the next line feed at or after `index` (`n`: none in these bytes), once looked up
        while index < n {
            if inQuotes {
                guard let quote = find(0x22, from: index, to: n) else { return }
                inQuotes = false
                index = quote + 1
            } else if recordHasContent {
                if lineEnd < index { lineEnd = find(0x0A, from: index, to: n) ?? n }
                if let quote = find(0x22, from: index, to: lineEnd) {
                    inQuotes = true
                    index = quote + 1
                    continue
                }
                guard lineEnd < n else { return }
                count += 1
                recordHasContent = false
                index = lineEnd + 1
            } else {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    inQuotes = true
                    recordHasContent = true
                case UInt8(ascii: "\n"), UInt8(ascii: "\r"):
                    break  // a blank line ends without counting
                default:
                    recordHasContent = true
                }
                index += 1
            }
        }
    }

    /// NDJSON: a line counts once it has a byte other than white space; after that byte only
    /// the line's end matters, found with `memchr` rather than byte by byte.
    private mutating func countLines(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress else { return }
        var index = 0
        while index < bytes.count {
            if lineHasContent {
                guard let end = memchr(base + index, 0x0A, bytes.count - index) else { return }
                count += 1
                lineHasContent = false
                index = base.distance(to: UnsafeRawPointer(end)) + 1
                continue
            }
            switch bytes[index] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                break  // a blank line ends without counting
            default:
                lineHasContent = true
            }
            index += 1
        }
    }

    /// Adds `bytes`.
    public mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The row count of everything added.
    ///
    /// - Throws: `.invalidInput` when a FHIR bundle is not a well-formed JSON object or its
    ///   `entry` is not an array; or when a CSV file ends inside a quoted field.
    public func finish() throws -> Int {
        let location = CohortError.Location(file: path)
        switch kind {
        case .csv:
            guard !inQuotes else {
                throw CohortError(.invalidInput, "CSV file ends inside a quoted field", at: location)
            }
            let records = count + (recordHasContent ? 1 : 0)
            return max(records - 1, 0)
        case .ndjson:
            return count + (lineHasContent ? 1 : 0)
        case .fhirBundle:
            do {
                return try bundle.finish()
            } catch {
                throw CohortError(.invalidInput, "FHIR bundle \(error.rawValue)", at: location)
            }
        }
    }

    /// The row count of the file at `url`, read in chunks, counted by the rule for the
    /// bag-relative `path`; nil when such files are not counted.
    public static func count(fileAt url: URL, path: String) throws -> Int? {
        guard var counter = RowCounter(path: path) else { return nil }
        let file = try ReadableFile(path: url.path)
        try file.forEachChunk { counter.update($0) }
        return try counter.finish()
    }
}
