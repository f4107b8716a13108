import CohortCore
import CohortCrypto

/// Deterministic resource ids: a name-based UUID (RFC 9562 version 5 layout, SHA-256 instead of
/// SHA-1) over cohort's namespace and the parts that identify the resource, so the same store,
/// protocol and recipient always give the same ids.
enum ResourceID {
    /// cohort's FHIR id namespace (a fixed random UUID).
    static let namespace: [UInt8] = [
        0x3b, 0x8e, 0x5d, 0x21, 0x7c, 0x4f, 0x4a, 0x90, 0x9e, 0x16, 0x52, 0xd7, 0x0a, 0xc3, 0x61, 0x84,
    ]

    /// The UUID (lowercase, hyphenated) for `parts`.
    static func make(_ parts: [String]) -> String {
        let builder = Builder()
        for part in parts { builder.append(part) }
        return builder.make()
    }

    /// The UUID text for a SHA-256 `digest`: its first 16 bytes with the version 5 and variant
    /// bits set, as lowercase hexadecimal grouped 8-4-4-4-12.
    static func uuidText(digest: [UInt8]) -> String {
        String(unsafeUninitializedCapacity: 36) { text in
            digest.withUnsafeBytes { writeUUID(digest: $0, into: text) }
            return 36
        }
    }

    /// Writes the 36 bytes of ``uuidText(digest:)`` into `text`.
    static func writeUUID(digest: UnsafeRawBufferPointer, into text: UnsafeMutableBufferPointer<UInt8>) {
        var out = 0
        for index in 0..<16 {
            var byte = digest[index]
            if index == 6 { byte = (byte & 0x0F) | 0x50 }
            if index == 8 { byte = (byte & 0x3F) | 0x80 }
            if index == 4 || index == 6 || index == 8 || index == 10 {
                text[out] = UInt8(ascii: "-")
                out += 1
            }
            text[out] = hexDigit(byte >> 4)
            text[out + 1] = hexDigit(byte & 0x0F)
            out += 2
        }
    }

    /// What joins the parts of an id: the unit separator cannot occur in pseudonyms, kinds or
    /// timestamps, so joins are unambiguous.
    static let separator: UInt8 = 0x1F

    /// The lowercase hexadecimal digit of `nibble` (0...15), computed rather than looked up in a
    /// global array (one lazy-global check and one bounds check per digit, 32 per id).
    @inline(__always)
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? nibble &+ UInt8(ascii: "0") : nibble &- 10 &+ UInt8(ascii: "a")
    }

    /// The parts of one id joined into bytes, after the namespace: a value, so a caller that
    /// builds an id per record can keep it in its own state (no access check per append on a
    /// class's property). ``Builder`` hashes it.
    struct Parts {
        private(set) var bytes: [UInt8] = ResourceID.namespace
        private var count = 0

        init() {
            bytes.reserveCapacity(256)
        }

        /// Appends the next part's UTF-8 bytes.
        mutating func append(_ part: String) {
            separate()
            bytes.append(contentsOf: part.utf8)
        }

        /// Appends the next part as `instant.iso8601`, or an empty part for nil.
        mutating func append(_ instant: Timestamp?) {
            separate()
            if let instant { ByteText.appendTimestamp(instant, to: &bytes) }
        }

        /// Appends the next part as `String(value)`.
        mutating func append(_ value: Int) {
            separate()
            ByteText.appendInt(value, to: &bytes)
        }

        /// Appends the next part: `joined`, which may hold several parts already joined with
        /// ``ResourceID/separator`` (so a run of parts constant for many ids is joined once).
        mutating func append(joined: UnsafeBufferPointer<UInt8>) {
            separate()
            bytes.append(contentsOf: joined)
        }

        /// ``append(joined:)-(UnsafeBufferPointer<UInt8>)`` for an array.
        mutating func append(joined: [UInt8]) {
            separate()
            bytes.append(contentsOf: joined)
        }

        /// Empties the parts (the namespace stays).
        mutating func reset() {
            bytes.removeSubrange(ResourceID.namespace.count...)
            count = 0
        }

        private mutating func separate() {
            if count > 0 { bytes.append(ResourceID.separator) }
            count += 1
        }
    }

    /// Builds ids part by part into one reused buffer and hasher, for the export's FHIR worker
    /// (one id per record). Gives exactly `ResourceID.make(parts)`. Not `Sendable`: one per thread.
    final class Builder {
        private let hasher = SHA256Hasher()
        private var parts = Parts()

        init() {}

        /// Appends the next part's UTF-8 bytes.
        func append(_ part: String) { parts.append(part) }

        /// Appends the next part as `instant.iso8601`, or an empty part for nil.
        func append(_ instant: Timestamp?) { parts.append(instant) }

        /// Appends the next part as `String(value)`.
        func append(_ value: Int) { parts.append(value) }

        /// The id of the parts appended since the last `make`; starts the next id.
        func make() -> String {
            String(unsafeUninitializedCapacity: 36) { text in
                finish(parts.bytes, into: text)
                parts.reset()
                return 36
            }
        }

        /// Appends the 36 bytes of the id of `parts` to `out`, without a String, and empties
        /// `parts` for the next id.
        func make(_ parts: inout Parts, into out: inout [UInt8]) {
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: 36))
            out.withUnsafeMutableBufferPointer { bytes in finish(parts.bytes, into: UnsafeMutableBufferPointer(rebasing: bytes[start...])) }
            parts.reset()
        }

        private func finish(_ input: [UInt8], into text: UnsafeMutableBufferPointer<UInt8>) {
            hasher.update(input)
            withUnsafeTemporaryAllocation(byteCount: SHA256.byteCount, alignment: 8) { digest in
                hasher.finalize(into: digest)
                ResourceID.writeUUID(digest: UnsafeRawBufferPointer(digest), into: text)
            }
        }
    }
}
