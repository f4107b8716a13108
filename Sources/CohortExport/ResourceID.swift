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
        // The unit separator cannot occur in pseudonyms, kinds or timestamps, so joins are unambiguous.
        var digest = SHA256.hash(namespace + Array(parts.joined(separator: "\u{1F}").utf8))
        digest[6] = (digest[6] & 0x0F) | 0x50
        digest[8] = (digest[8] & 0x3F) | 0x80
        let hex = Hex.encode(Array(digest[0..<16]))
        let c = Array(hex)
        return String(c[0..<8]) + "-" + String(c[8..<12]) + "-" + String(c[12..<16]) + "-" + String(c[16..<20]) + "-"
            + String(c[20..<32])
    }
}
