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
            for byte in bytes {
                switch byte {
                case UInt8(ascii: "\""):
                    inQuotes.toggle()
                    recordHasContent = true
                case UInt8(ascii: "\n") where !inQuotes:
                    if recordHasContent { count += 1 }
                    recordHasContent = false
                case UInt8(ascii: "\r") where !inQuotes:
                    break
                default:
                    recordHasContent = true
                }
            }
        case .ndjson:
            countLines(bytes)
        case .fhirBundle:
            bundle.update(bytes)
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
