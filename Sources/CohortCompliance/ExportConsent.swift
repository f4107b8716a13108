package import CohortCore
import Foundation

/// Why consent leaves a participant out of an export (counted, never named, in what leaves the study).
package enum ExportConsentReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// No consent was ever in force.
    case noConsent = "no consent"
    /// The consent in force is of a version the protocol no longer accepts.
    case versionNotAccepted = "consent version not accepted"
    /// The consent's sharing scope does not allow the export's audience.
    case scope = "sharing scope"
}

/// Why consent leaves one record out of an export.
package enum RecordConsentReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The consent that governs the record's time does not cover its data type.
    case notCovered = "data type not covered by consent"
    /// The consent that governs the record's time is of a version the protocol no longer accepts.
    case versionNotAccepted = "consent version not accepted"
}

/// What consent allows an export to publish of one participant: which consent governs each
/// instant, and whether it covers a data type.
///
/// The participant's consents, ordered by signing, split time into segments: a consent governs
/// from its signing until the next one is signed, and the first one also governs everything
/// before it (data recorded on the enrollment day before the signature). A version the protocol
/// marks `retroactive` also governs every segment before its own. A record is covered when the
/// governing version is accepted and covers the record's data type.
package struct ConsentCoverage: Sendable {
    /// The consent in force at the export's snapshot (for a participant who stopped: the last one they signed).
    package let inForce: Consent
    /// Signing instants (ms) where each segment after the first begins.
    private let boundaries: [Int64]
    /// Per segment: whether its governing version is accepted, and the data types it allows (none
    /// when not accepted) as bits by case index (``CaseHash``). Plain values, so the per-record
    /// check (twice per exported record: the k-anonymity pass and the write) copies, retains and
    /// hashes nothing; a tuple with the version's `String` and a `Set` was copied out of the array
    /// per record (issue 28, ninth round: about 1 % of the CSV + JSON export's CPU).
    private let segments: [Segment]

    private struct Segment {
        let accepted: Bool
        let types: UInt64

        func allows(_ type: DataType) -> Bool { types & ConsentCoverage.bit(type) != 0 }
    }

    /// `type`'s bit in ``Segment/types``.
    @inline(__always)
    static func bit(_ type: DataType) -> UInt64 { 1 << UInt64(type.caseIndex) }

    /// The coverage of `chain` (the participant's consents, any order) under `policy` for a protocol collecting `collected`.
    init(inForce: Consent, chain: [Consent], policy: ConsentPolicy, collected: Set<DataType>) {
        self.inForce = inForce
        let ordered = chain.sorted { ConsentRules.isEarlier($0, $1) }
        var boundaries: [Int64] = []
        var segments: [Segment] = []
        for (index, consent) in ordered.enumerated() {
            // The latest retroactive version signed after this one governs this segment instead.
            let governing = ordered[(index + 1)...].last { policy.document(version: $0.version)?.retroactive == true } ?? consent
            let document = policy.document(version: governing.version)
            let accepted = document?.accepted ?? false
            let types: Set<DataType> = accepted ? collected.filter { document?.covers($0) ?? false } : []
            if index > 0 { boundaries.append(consent.signedAt.epochMilliseconds) }
            segments.append(Segment(accepted: accepted, types: types.reduce(0) { $0 | Self.bit($1) }))
        }
        self.boundaries = boundaries
        self.segments = segments
    }

    /// Nil when consent covers a record of `type` at `instant` (ms since the epoch); else why not.
    package func refusal(for type: DataType, atMilliseconds instant: Int64) -> RecordConsentReason? {
        var segment = 0
        while segment < boundaries.count && boundaries[segment] <= instant { segment += 1 }
        let governing = segments[segment]
        if !governing.accepted { return .versionNotAccepted }
        return governing.allows(type) ? nil : .notCovered
    }

    /// Nil when consent covers `record`; else the key it is counted under in what the export states,
    /// `<data type>: <reason>` (`biometric: data type not covered by consent`).
    package func leftOutKey(for record: Record) -> String? {
        let type = record.kind.dataType
        return refusal(for: type, atMilliseconds: record.start.epochMilliseconds).map { "\(type.rawValue): \($0.rawValue)" }
    }

    /// Whether every segment allows `type` (a record of it is published whatever its time).
    package func alwaysCovers(_ type: DataType) -> Bool { segments.allSatisfy { $0.allows(type) } }
}

/// Whether consent lets a participant into an export for `audience`, and under which coverage.
package enum ExportConsentDecision: Sendable {
    /// Included: records are published where `coverage` allows.
    case included(ConsentCoverage)
    /// Left out, for this reason.
    case leftOut(ExportConsentReason)
}

extension ConsentRules {
    /// The consent decision for `subject` in an export to `audience` (the participant's status
    /// at the snapshot and their consent history): a consent must be in force (for a participant
    /// who stopped, the last one signed before stopping — their data up to then stays publishable),
    /// of a version the protocol accepts, with a sharing scope that allows `audience`.
    /// Participants who withdrew with `exclude` or `erase` are the caller's to leave out.
    package func exportDecision(for subject: ComplianceSubject, history: [Consent], audience: ExportAudience, collected: Set<DataType>)
        -> ExportConsentDecision
    {
        let mine = history.filter { $0.participantID == subject.id }
        let basis: Consent? =
            subject.status == .active
            ? consentInForce(in: mine) : latest(mine, participantID: subject.id) { $0 != .superseded }
        guard let basis else { return .leftOut(.noConsent) }
        guard policy.accepts(version: basis.version) else { return .leftOut(.versionNotAccepted) }
        guard policy.audiences(for: basis.sharing)?.contains(audience) == true else { return .leftOut(.scope) }
        return .included(ConsentCoverage(inForce: basis, chain: mine, policy: policy, collected: collected))
    }
}
