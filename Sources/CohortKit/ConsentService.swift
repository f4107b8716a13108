public import CohortCompliance
public import CohortCore
import CohortCrypto
import CohortStore
import Foundation

/// Consent: render documents, record consents (history kept), status.
public struct ConsentService: Sendable {
    /// The workspace whose store records the consents.
    public let workspace: Workspace
    /// A service over `workspace`.
    public init(workspace: Workspace) { self.workspace = workspace }

    /// The consent document of `version`, rendered with the study's details: the exact text whose
    /// SHA-256 a consent row stores (`cohort consent render --version V | sha256sum`).
    public func render(version: String) throws -> String {
        let p = try workspace.currentProtocol().studyProtocol
        guard let document = p.consent.document(version: version) else {
            throw CohortError(.notFound, "consent version \(version) is not listed in the protocol",
                hint: "versions: \(p.consent.documents.map(\.version).joined(separator: ", "))")
        }
        var context = Templates.studyContext(p)
        context["version"] = version
        return try Templates.render(try Templates.pinned(document.template, workspace: workspace), context, name: document.template)
    }

    /// Parses `typed:NAME`, `drawn:FILE` (the drawing's SHA-256 is kept) or `wet-ink:REF`.
    static func signature(_ spec: String?) throws -> (SignatureKind, String?) {
        guard let spec, !spec.isEmpty else { return (.typed, nil) }
        let parts = spec.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let kind = SignatureKind(rawValue: parts[0]), !parts[1].isEmpty else {
            throw CohortError.invalid("expected typed:NAME, drawn:FILE or wet-ink:REF", field: "signature")
        }
        if kind == .drawn {
            guard let data = FileManager.default.contents(atPath: parts[1]) else {
                throw CohortError(.notFound, "cannot read the drawn signature file", at: .init(file: parts[1], field: "signature"))
            }
            return (kind, "sha256:" + SHA256.hex(data))
        }
        return (kind, parts[1])
    }

    /// Records a consent for participant `code`. `signedAt` defaults to now.
    public func record(code: String, version: String, signedAt: Timestamp?, signature: String?, sharing: SharingScope) throws -> ConsentChange {
        let pinned = try workspace.currentProtocol()
        guard let stored = try workspace.store.participant(code: code) else {
            throw CohortError(.notFound, "no enrolled participant has study code \(code)", hint: "see `cohort participant list`")
        }
        let text = try render(version: version)
        let (kind, evidence) = try Self.signature(signature)
        let subject = ComplianceSubject(stored.participant)
        let zone = try subject.resolvedTimeZone()
        let draft = ConsentDraft(
            version: version, documentSHA256: SHA256.hex(Array(text.utf8)), signedAt: signedAt ?? Timestamp(workspace.now(), in: zone),
            signatureKind: kind, sharing: sharing)
        let histories = try workspace.store.consentHistories()
        let change = try ConsentRules(studyProtocol: pinned.studyProtocol).validateNewConsent(
            draft, for: subject, history: histories[stored.participant.id] ?? [], now: workspace.now(), id: UUID())
        try workspace.store.recordConsent(
            change.consent, participant: stored.handle, signatureEvidence: evidence, supersede: change.supersededIDs, actor: workspace.actor, at: workspace.now())
        try workspace.checkpoint()
        return change
    }

    /// One status row per participant.
    public func status() throws -> [ConsentStatusRow] {
        let rules = ConsentRules(studyProtocol: try workspace.currentProtocol().studyProtocol)
        let histories = try workspace.store.consentHistories()
        return try workspace.store.participants().map { stored in
            try rules.statusRow(for: ComplianceSubject(stored.participant), history: histories[stored.participant.id] ?? [])
        }
    }
}
