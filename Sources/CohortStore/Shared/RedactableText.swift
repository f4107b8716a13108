import CohortCrypto
import Foundation

/// Texts that may hold personal data (staff reasons, actor names, anything a person typed) are
/// not written into the hash-chained audit trail. The chain holds a reference,
/// `redactable:<hex SHA-256(salt ‖ text)>`; the text itself is stored encrypted under pii.key
/// in `redactable_texts` with its random 16-byte salt (associated data `redactable:<digest>`).
/// Deleting that row (an erase) leaves the chain intact, and without the salt a guess of the
/// text cannot be confirmed from the hash.
///
/// The crypto only; each store keeps the rows in its own `redactable_texts` table.
package struct RedactableText: Sendable {
    /// What a committed value starts with when it refers to a redactable text.
    package static let prefix = "redactable:"

    /// The hex SHA-256 of salt ‖ text: the row's key and what the chain commits to.
    package var digest: String
    /// The random salt (16 bytes).
    package var salt: [UInt8]
    /// The text sealed under pii.key.
    package var sealed: [UInt8]

    /// A stored text: its digest, salt and sealed bytes as read from a row.
    package init(digest: String, salt: [UInt8], sealed: [UInt8]) {
        self.digest = digest
        self.salt = salt
        self.sealed = sealed
    }

    /// The reference the chain commits to.
    package var reference: String { Self.prefix + digest }

    /// `text` salted, hashed and sealed with `key`.
    package static func seal(_ text: String, key: [UInt8]) throws -> RedactableText {
        let salt = try SecureRandom.bytes(16)
        let digest = SHA256.hex(salt + Array(text.utf8))
        let sealed = try AESGCM.seal(Array(text.utf8), key: key, authenticating: Array("redactable:\(digest)".utf8))
        return RedactableText(digest: digest, salt: salt, sealed: sealed)
    }

    /// The digest a committed value refers to, or nil when it is a plain value.
    package static func digest(of value: String) -> String? {
        guard value.hasPrefix(prefix) else { return nil }
        return String(value.dropFirst(prefix.count))
    }

    /// Which check failed when a stored text is opened.
    package enum OpenFailure: Error {
        /// The sealed text does not open with this key for this digest (wrong key, or a moved row).
        case sealedText
        /// The salt and text do not hash to the digest the chain commits to.
        case salt
    }

    /// The text of a stored row, checked against the digest the chain commits to.
    package func open(key: [UInt8]) throws(OpenFailure) -> String {
        let plain: [UInt8]
        do {
            plain = try AESGCM.open(sealed, key: key, authenticating: Array("redactable:\(digest)".utf8))
        } catch {
            throw .sealedText
        }
        guard SHA256.hex(salt + plain) == digest else { throw .salt }
        return String(decoding: plain, as: UTF8.self)
    }
}
