public import CohortCompliance
public import CohortCore
public import CohortCrypto
import CohortStore
import Foundation

/// Who asks for a withdrawal.
public enum WithdrawalRequester: Sendable {
    /// The participant, proving it with their one-time token.
    case participant(token: String)
    /// Study staff, with a reason.
    case staff(reason: String)
}

/// What a withdrawal did (or, for a dry run, would do).
public struct WithdrawalOutcome: Sendable {
    /// Nil when the participant was already withdrawn in that mode.
    public var receipt: WithdrawalReceipt?
    /// The signed receipt text, for the participant.
    public var receiptText: String?
    /// The earlier withdrawal, when the participant was already withdrawn in this mode (nothing changed).
    public var alreadyWithdrawn: ExistingWithdrawal?
    /// True when nothing was changed because a dry run was asked for.
    public var dryRun: Bool
    /// Records the participant had stored when asked (`erase` deletes them).
    public var records: Int
    /// The participant's consent entries.
    public var consents: Int
    /// The withdrawal mode asked for (`stop`, `exclude` or `erase`).
    public var mode: WithdrawalMode
}

/// `cohort withdraw`: the participant's own command (with their token) and staff's.
public struct WithdrawalService: Sendable {
    /// The workspace the participant is enrolled in.
    public let workspace: Workspace
    /// Withdrawals in `workspace`.
    public init(workspace: Workspace) { self.workspace = workspace }

    static let mismatch = CohortError(
        .security, "the participant code and withdrawal token do not match", hint: "check both; the token was given at enrollment. Nothing was changed.")

    /// Checks the request and withdraws (unless `dryRun`). A wrong token changes nothing, is
    /// audited without the token, and gets the same message whether or not the code exists.
    public func withdraw(code: String, mode: WithdrawalMode, requester: WithdrawalRequester, dryRun: Bool) throws -> WithdrawalOutcome {
        let pinned = try workspace.currentProtocol()
        let stored = try workspace.store.participant(code: code)
        if case let .participant(token) = requester {
            // Always hash and compare, also for an unknown code, so timing does not tell.
            let saltAndHash = try stored.flatMap { try workspace.store.withdrawalTokenHash($0.handle) }
            let salt = saltAndHash?.salt ?? Array(repeating: 0, count: 16)
            let expected = saltAndHash?.hash ?? Array(repeating: 0xFF, count: 32)
            let ok = constantTimeEquals(Roster.tokenHash(token, salt: salt), expected) && saltAndHash != nil
            guard ok else {
                try workspace.store.appendEvent(
                    actor: workspace.actor, action: "withdraw.denied", subject: stored?.participant.id.uuidString.lowercased(),
                    details: ["reason": "token mismatch", "mode": mode.rawValue], at: workspace.now())
                try workspace.checkpoint()
                throw Self.mismatch
            }
        }
        guard let stored else {
            throw CohortError(.notFound, "no enrolled participant has study code \(code)", hint: "see `cohort participant list`")
        }
        if case let .staff(reason) = requester, reason.trimmingCharacters(in: .whitespaces).isEmpty {
            throw CohortError.invalid("staff withdrawals need a reason", field: "reason", hint: "pass --reason \"…\" (no identifiers in it: it is audited)")
        }
        let p = stored.participant
        let zone = TimeZone(identifier: p.timeZone) ?? .gmt
        let now = Timestamp(workspace.now(), in: zone)
        let records = try workspace.store.recordCount(stored.handle)
        let history = try workspace.store.consentHistory(stored.handle, participantID: p.id)
        switch try WithdrawalPlan.decide(status: p.status, withdrawnAt: p.withdrawnAt, requested: mode, now: now) {
        case let .alreadyWithdrawn(existing):
            return WithdrawalOutcome(alreadyWithdrawn: existing, dryRun: dryRun, records: records, consents: history.count, mode: mode)
        case let .proceed(plan):
            if dryRun {
                return WithdrawalOutcome(dryRun: true, records: records, consents: history.count, mode: mode)
            }
            let consent = ConsentRules(studyProtocol: pinned.studyProtocol).consentInForce(in: history, participantID: p.id)
                ?? history.last
            let receiptID = UUID()
            let byParticipant: Bool
            let reason: String?
            switch requester {
            case .participant: (byParticipant, reason) = (true, nil)
            case let .staff(r): (byParticipant, reason) = (false, r)
            }
            let counts = try workspace.store.withdraw(
                stored.handle, participantID: p.id, mode: mode, at: plan.withdrawnAt, by: byParticipant ? "participant" : "staff",
                actor: byParticipant ? "participant" : workspace.actor, reason: reason, consentVersion: consent?.version, receiptID: receiptID)
            try workspace.checkpoint()
            let receipt = WithdrawalReceipt(
                plan: plan, studyProtocol: pinned.studyProtocol, participantCode: p.code, receiptID: receiptID, issuedAt: now,
                requestedBy: byParticipant ? .participant : .staff, consentVersion: consent?.version,
                counts: .init(
                    recordsDeleted: mode == .erase ? counts.records : 0, recordsRetained: mode == .erase ? 0 : counts.records,
                    identifiersDeleted: mode == .erase ? 1 : 0, consentsRetained: counts.consents))
            let text = try ReceiptDocument.make(receipt, studyProtocol: pinned.studyProtocol, signingKey: workspace.keystore.signingKey)
            return WithdrawalOutcome(receipt: receipt, receiptText: text, dryRun: false, records: records, consents: history.count, mode: mode)
        }
    }
}

/// The signed receipt document: human text, the receipt as JSON, and an Ed25519 signature over
/// every byte before the signature block.
public enum ReceiptDocument {
    static let jsonBegin = "-----BEGIN COHORT RECEIPT-----"
    static let jsonEnd = "-----END COHORT RECEIPT-----"
    static let signatureBegin = "-----BEGIN COHORT SIGNATURE-----"
    static let signatureEnd = "-----END COHORT SIGNATURE-----"

    static let fallbackTemplate = "WITHDRAWAL RECEIPT — {{title}}\nParticipant: {{participant_code}}\nMode: {{mode}}\nWithdrawn: {{withdrawn_at}}\nReceipt id: {{receipt_id}}\n"

    static func make(_ receipt: WithdrawalReceipt, studyProtocol: StudyProtocol, signingKey: Ed25519PrivateKey) throws -> String {
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
