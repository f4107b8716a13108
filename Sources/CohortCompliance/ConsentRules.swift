package import CohortCore
package import Foundation

/// The consent rules of a protocol: which consent is in force, when re-consent is due,
/// whether data may be imported, and how a new consent changes the history.
///
/// Pure: the history comes in as values, the clock and new ids are injected, and the result
/// says what the store must write.
package struct ConsentRules: Sendable {
    /// The protocol's consent policy.
    public let policy: ConsentPolicy
    /// The protocol's duration in days (the last study day is enrollment + duration − 1).
    package let durationDays: Int
    /// The data types the protocol collects.
    package let collectedTypes: Set<DataType>

    /// The rules of `studyProtocol`.
    package init(studyProtocol: StudyProtocol) {
        self.policy = studyProtocol.consent
        self.durationDays = studyProtocol.durationDays
        self.collectedTypes = Set(studyProtocol.dataTypes.keys)
    }

    /// The consent in force: the latest `active` row (by signing time, then recording time).
    /// Rows of other participants are ignored when `participantID` is given.
    package func consentInForce(in history: [Consent], participantID: UUID? = nil) -> Consent? {
        latest(history, participantID: participantID) { $0 == .active }
    }

    /// Whether `consent` must be renewed under the protocol's re-consent policy and current version.
    package func isReconsentDue(_ consent: Consent) -> Bool {
        policy.reconsent.requiresReconsent(signed: consent.version, current: policy.currentVersion)
    }

    /// Prepares the per-record import check for `subject` (see `ImportGate.check(_:)`).
    ///
    /// A withdrawn participant's consent row may itself be marked `withdrawn`; data recorded
    /// before a stop/exclude withdrawal is judged against that last consent. Throws when the
    /// participant's time zone is unknown.
    package func importGate(for subject: ComplianceSubject, history: [Consent]) throws -> ImportGate {
        let zone = try subject.resolvedTimeZone()
        let first = Self.startOfDay(subject.enrolledOn, in: zone)
        let end = Self.startOfDay(subject.studyEnd(durationDays: durationDays).adding(days: 1), in: zone)
        var refusal: ImportRefusal?
        var withdrawnAt: Int64?
        let consent: Consent?
        switch subject.status {
        case .erased:
            refusal = .erased
            consent = nil
        case .stopped, .excluded:
            consent = latest(history, participantID: subject.id) { $0 != .superseded }
            if let at = subject.withdrawnAt { withdrawnAt = at.epochMilliseconds } else { refusal = .withdrawn }
        case .active:
            consent = consentInForce(in: history, participantID: subject.id)
            if let at = subject.withdrawnAt { withdrawnAt = at.epochMilliseconds }
        }
        if refusal == nil {
            if let consent {
                if isReconsentDue(consent) { refusal = .reconsentDue }
            } else {
                refusal = .noConsent
            }
        }
        return ImportGate(standingRefusal: refusal, firstMillisecond: first, endMillisecond: end, withdrawnAtMillisecond: withdrawnAt)
    }

    /// Whether data for `subject` at `instant` may be imported (one-off form of `importGate`).
    package func importEligibility(for subject: ComplianceSubject, history: [Consent], at instant: Timestamp) throws -> ImportEligibility {
        try importGate(for: subject, history: history).check(instant)
    }

    /// Validates a new consent and says how the history changes.
    ///
    /// Rejected: a withdrawn participant (`policy`); a version the protocol does not list
    /// (`notFound`, the hint lists known versions); a sharing scope the protocol does not define
    /// (`notFound`); a document hash that is not 64 hex digits;
    /// signing before the enrollment day starts in the participant's zone or after `now`
    /// (`invalidInput`); signing before the consent in force (`conflict`). Accepted: a new
    /// `active` row with `id`, recorded at `now`, superseding every row that was active.
    package func validateNewConsent(
        _ draft: ConsentDraft, for subject: ComplianceSubject, history: [Consent], now: Date, id: UUID
    ) throws -> ConsentChange {
        let zone = try subject.resolvedTimeZone()
        guard !subject.status.isWithdrawn else {
            throw CohortError(
                .policy, "a participant who withdrew cannot consent again",
                hint: "a withdrawal is final; enroll the person as a new participant if they want to rejoin")
        }
        guard policy.document(version: draft.version) != nil else {
            let known = policy.documents.map(\.version).joined(separator: ", ")
            throw CohortError(
                .notFound, "consent version \(draft.version) is not listed in the protocol", at: .init(field: "version"),
                hint: "use one of the versions the protocol lists: \(known.isEmpty ? "none" : known)")
        }
        guard policy.audiences(for: draft.sharing) != nil else {
            throw CohortError(
                .notFound, "sharing scope \(draft.sharing) is not defined by the protocol", at: .init(field: "sharing"),
                hint: "use one of: \(policy.allSharingScopes.keys.sorted().map(\.rawValue).joined(separator: ", "))")
        }
        guard draft.documentSHA256.utf8.count == 64, draft.documentSHA256.utf8.allSatisfy({ Self.isHexDigit($0) }) else {
            throw CohortError.invalid(
                "the consent document digest is not a SHA-256 in hex", field: "document_sha256",
                hint: "give the SHA-256 of the exact document text as 64 hexadecimal digits")
        }
        guard draft.signedAt.localDate(in: zone) >= subject.enrolledOn else {
            throw CohortError.invalid(
                "the consent is signed before the participant's enrollment day", field: "signed_at",
                hint: "check the signing time and its UTC offset; consent is signed on or after the enrollment day, in the participant's time zone")
        }
        guard draft.signedAt.date <= now else {
            throw CohortError.invalid(
                "the consent signing time is in the future", field: "signed_at",
                hint: "check the signing time and its UTC offset")
        }
        let mine = history.filter { $0.participantID == subject.id }
        if let current = consentInForce(in: mine), draft.signedAt < current.signedAt {
            throw CohortError(
                .conflict, "the consent is signed before the consent in force", at: .init(field: "signed_at"),
                hint: "a re-consent must be signed after the consent it replaces; the history keeps earlier consents as they are")
        }
        let consent = Consent(
            id: id, participantID: subject.id, version: draft.version, documentSHA256: draft.documentSHA256.lowercased(),
            signedAt: draft.signedAt, signatureKind: draft.signatureKind, sharing: draft.sharing, status: .active,
            recordedAt: Timestamp(now, in: zone))
        let superseded = mine.filter { $0.status == .active }.sorted { Self.isEarlier($0, $1) }.map(\.id)
        return ConsentChange(consent: consent, supersededIDs: superseded, reconsentDue: isReconsentDue(consent))
    }

    /// The `cohort consent status` row of `subject`. Throws when their time zone is unknown.
    package func statusRow(for subject: ComplianceSubject, history: [Consent]) throws -> ConsentStatusRow {
        let zone = try subject.resolvedTimeZone()
        let consent: Consent?
        let standing: ConsentStatusRow.Standing
        if subject.status.isWithdrawn {
            consent = latest(history, participantID: subject.id) { $0 != .superseded }
            standing = .withdrawn
        } else {
            consent = consentInForce(in: history, participantID: subject.id)
            standing = consent == nil ? .none : .active
        }
        // What an export may publish now: nothing for a participant left out of every export.
        let exportable = consent != nil && subject.status != .excluded && subject.status != .erased
        let document = consent.flatMap { policy.document(version: $0.version) }
        let accepted = document?.accepted ?? false
        var row = ConsentStatusRow(
            code: subject.code, participantID: subject.id, version: consent?.version,
            signedOn: consent.map { $0.signedAt.localDate(in: zone) }, sharing: consent?.sharing, status: standing,
            withdrawal: subject.status.withdrawalMode, reconsentDue: !subject.status.isWithdrawn && (consent.map(isReconsentDue) ?? false))
        row.audiences = exportable && accepted ? (consent.flatMap { policy.audiences(for: $0.sharing) } ?? []).sorted() : []
        row.dataTypes = exportable && accepted ? collectedTypes.filter { document?.covers($0) ?? false }.sorted() : []
        row.versionAccepted = consent == nil ? nil : accepted
        return row
    }

    func latest(_ history: [Consent], participantID: UUID?, where keep: (ConsentStatus) -> Bool) -> Consent? {
        var best: Consent?
        for consent in history where keep(consent.status) && (participantID.map { $0 == consent.participantID } ?? true) {
            if let current = best, !Self.isEarlier(current, consent) { continue }
            best = consent
        }
        return best
    }

    /// Order of consents: signing time, then recording time, then id (a total order).
    static func isEarlier(_ a: Consent, _ b: Consent) -> Bool {
        if a.signedAt.epochMilliseconds != b.signedAt.epochMilliseconds { return a.signedAt.epochMilliseconds < b.signedAt.epochMilliseconds }
        if a.recordedAt.epochMilliseconds != b.recordedAt.epochMilliseconds {
            return a.recordedAt.epochMilliseconds < b.recordedAt.epochMilliseconds
        }
        return a.id.uuidString < b.id.uuidString
    }

    /// The first instant (ms since the epoch) of `day` in `zone`. A midnight that a DST change
    /// skips maps to the transition instant, the day's real first instant.
    static func startOfDay(_ day: CivilDate, in zone: TimeZone) -> Int64 {
        let localMs = Int64(day.daysSinceEpoch) * 86_400_000
        return localMs - Int64(Timestamp.resolveOffset(localMs: localMs, in: zone)) * 1000
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (48...57).contains(byte) || (65...70).contains(byte) || (97...102).contains(byte)
    }
}
