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
        var input = namespace
        input.reserveCapacity(namespace.count + parts.reduce(0) { $0 + $1.utf8.count + 1 })
        for (index, part) in parts.enumerated() {
            if index > 0 { input.append(0x1F) }
            input.append(contentsOf: part.utf8)
        }
        var digest = SHA256.hash(input)
        digest[6] = (digest[6] & 0x0F) | 0x50
        digest[8] = (digest[8] & 0x3F) | 0x80
        let hex = Array(Hex.encode(Array(digest.prefix(16))).utf8)
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (index, digit) in hex.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { text.append(UInt8(ascii: "-")) }
            text.append(digit)
        }
        return String(decoding: text, as: UTF8.self)
    }
}
