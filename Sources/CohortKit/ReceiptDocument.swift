public import CohortCompliance
import CohortCore
public import CohortCrypto
import Foundation

/// The signed receipt document: human text, the receipt as JSON, and an Ed25519 signature over
/// every byte before the signature block.
public enum ReceiptDocument {
    static let jsonBegin = "-----BEGIN COHORT RECEIPT-----"
    static let jsonEnd = "-----END COHORT RECEIPT-----"
    static let signatureBegin = "-----BEGIN COHORT SIGNATURE-----"
    static let signatureEnd = "-----END COHORT SIGNATURE-----"

    static let fallbackTemplate = "WITHDRAWAL RECEIPT — {{title}}\nParticipant: {{participant_code}}\nMode: {{mode}}\nWithdrawn: {{withdrawn_at}}\nReceipt id: {{receipt_id}}\n"

    /// The signed line naming the site whose key signs (a multi-site study's site key); the
    /// owner's receipts have none.
    static let signerSitePrefix = "Signed for site: "

    static func make(_ receipt: WithdrawalReceipt, studyProtocol: StudyProtocol, signingKey: Ed25519PrivateKey, signerSite: String? = nil) throws -> String {
        var context = Templates.studyContext(studyProtocol)
        let meaning: String =
            switch receipt.mode {
            case .stop: "no new data is collected; data already collected stays in the study"
            case .exclude: "no new data is collected, and your data is left out of every later export"
            case .erase: "your records and identifiers were deleted"
            }
        context.merge(
            [
                "participant_code": receipt.participantCode, "withdrawn_at": receipt.withdrawnAt.iso8601, "mode": receipt.mode.rawValue,
                "mode_meaning": meaning, "requested_by": receipt.requestedBy == .participant ? "the participant" : "study staff",
                "consent_version": receipt.consentVersion ?? "none", "records": receipt.mode == .erase ? "\(receipt.counts.recordsDeleted) deleted" : "\(receipt.counts.recordsRetained) kept",
                "receipt_id": receipt.receiptID.uuidString.lowercased(), "issued_at": receipt.issuedAt.iso8601,
            ], uniquingKeysWith: { $1 })
        let template = Templates.builtIn("withdrawal-receipt.mustache", fallback: fallbackTemplate)
        var text = try Templates.render(template, context, name: "withdrawal-receipt.mustache")
        if !text.hasSuffix("\n") { text += "\n" }
        text += "\n" + jsonBegin + "\n" + wrap(Base64.encode(Array(try receipt.canonicalBytes()))) + jsonEnd + "\n"
        if let signerSite { text += signerSitePrefix + signerSite + "\n" }
        let signature = try signingKey.signature(for: Array(text.utf8))
        text += signatureBegin + "\n" + "key: \(signingKey.publicKey.fingerprint)\n" + wrap(Base64.encode(signature)) + signatureEnd + "\n"
        return text
    }

    static func wrap(_ text: String) -> String {
        var out = ""
        var line = ""
        for ch in text {
            line.append(ch)
            if line.count == 64 {
                out += line + "\n"
                line = ""
            }
        }
        if !line.isEmpty { out += line + "\n" }
        return out
    }

    /// What the receipt says of its signer, unverified: the `key:` fingerprint of its signature
    /// block and the site of its signed `Signed for site:` line (nil when absent).
    public static func signerClaims(_ text: String) -> (keyFingerprint: String?, site: String?) {
        guard let sigStart = text.range(of: signatureBegin + "\n"), let sigEnd = text.range(of: signatureEnd), sigStart.upperBound <= sigEnd.lowerBound,
            let jsonEnd = text.range(of: jsonEnd), jsonEnd.upperBound <= sigStart.lowerBound
        else { return (nil, nil) }
        let key = text[sigStart.upperBound..<sigEnd.lowerBound].split(separator: "\n").first { $0.hasPrefix("key: ") }.map { String($0.dropFirst(5)) }
        let site = text[jsonEnd.upperBound..<sigStart.lowerBound].split(separator: "\n").first { $0.hasPrefix(signerSitePrefix) }
            .map { String($0.dropFirst(signerSitePrefix.count)) }
        return (key, site)
    }

    /// Verifies a receipt document with `publicKey`; returns the receipt when the signature holds.
    public static func verify(_ text: String, publicKey: Ed25519PublicKey) throws -> WithdrawalReceipt {
        guard let sigStart = text.range(of: signatureBegin + "\n"), let sigEnd = text.range(of: signatureEnd),
            let jsonStart = text.range(of: jsonBegin + "\n"), let jsonEnd = text.range(of: jsonEnd), jsonEnd.upperBound <= sigStart.lowerBound
        else {
            throw CohortError(.integrity, "this is not a cohort receipt (its receipt or signature block is missing)")
        }
        let signed = String(text[..<sigStart.lowerBound])
        let sigLines = text[sigStart.upperBound..<sigEnd.lowerBound].split(separator: "\n").filter { !$0.hasPrefix("key:") }
        guard let signature = Base64.decode(sigLines.joined()) else { throw CohortError(.integrity, "the receipt's signature block is malformed") }
        guard publicKey.isValidSignature(signature, for: Array(signed.utf8)) else {
            throw CohortError(.integrity, "the receipt's signature does not verify with this study key (altered, or signed by another key)")
        }
        guard let json = Base64.decode(text[jsonStart.upperBound..<jsonEnd.lowerBound].split(separator: "\n").joined()) else {
            throw CohortError(.integrity, "the receipt block is malformed")
        }
        do {
            return try JSONDecoder().decode(WithdrawalReceipt.self, from: Data(json))
        } catch {
            throw CohortError(.integrity, "the receipt block cannot be read")
        }
    }
}
