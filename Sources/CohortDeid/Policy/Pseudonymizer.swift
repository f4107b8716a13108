package import Foundation
import CohortCrypto

/// Makes recipient-keyed pseudonyms: `Base32(HMAC-SHA256(recipientKey, "pseudonym" ‖ id))`,
/// cut to 16 characters (80 bits).
///
/// The message is the participant's internal id (a random UUID, lower-case string), never a
/// name, study code or MRN, so a pseudonym reveals nothing and cannot be recomputed without the
/// key. The same recipient key always gives the same pseudonym; another recipient's key gives a
/// different one. Different pseudonyms do not make exports unlinkable: record values (a step
/// count series, the dates) link a participant's rows across recipients.
package struct Pseudonymizer: Sendable {
    /// Characters in a pseudonym: 16 base-32 characters carry 80 bits.
    package static let length = 16

    private let key: [UInt8]

    /// A pseudonymizer for one recipient's key (at least 16 bytes; 32 from the keystore).
    package init(recipientKey: [UInt8]) {
        self.key = recipientKey
    }

    /// The pseudonym of the participant with internal id `id`.
    public func pseudonym(for id: UUID) -> String {
        let message = Array("pseudonym".utf8) + Array(id.uuidString.lowercased().utf8)
        let mac = HMACSHA256.authenticationCode(key: key, message: message)
        return String(Base32.encode(mac).prefix(Self.length))
    }
}
