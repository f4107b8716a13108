package import Foundation

/// Canonical JSON: sorted keys, no insignificant white space, `/` unescaped. What cohort hashes
/// (protocols, audit events, manifests), so a byte-for-byte recomputation is possible.
package enum CanonicalJSON {
    public static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(value)
    }

    /// Pretty, sorted JSON for people (and for stable golden files).
    public static func pretty<T: Encodable>(_ value: T) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        return try encoder.encode(value)
    }
}
