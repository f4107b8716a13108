package import CohortCore
import CohortCrypto
import Foundation

/// The machine-readable de-identification report that goes into the bag
/// (`data/reports/deidentification.json`): what was applied, dropped and found — never a key,
/// an offset or an identifier value.
public struct DeidentificationReport: Sendable, Hashable, Codable {
    /// Schema identifier of this report format.
    package static let schemaID = "cohort/deidentification-report@1"

    /// One policy rule and how many values it transformed.
    public struct RuleApplication: Sendable, Hashable, Codable {
        /// The policy key (`symptom_log.note`, `records.start`).
        public var field: String
        package var transform: Transform
        public var values: Int
        package init(field: String, transform: Transform, values: Int) {
            self.field = field
            self.transform = transform
            self.values = values
        }
    }

    /// A field and a count of values.
    public struct FieldCount: Sendable, Hashable, Codable {
        public var field: String
        public var values: Int
        package init(field: String, values: Int) {
            self.field = field
            self.values = values
        }
    }

    /// The configured date shift (the range, never an offset), what else keeps time from giving
    /// it away, and what the policy still lets an attacker learn.
    public struct DateShiftSettings: Sendable, Hashable, Codable {
        package var maxDays: Int
        package var wholeWeeks: Bool
        /// The offsets drawn from, in days (`[-180, -1]`; whole weeks `[-175, -7]`); nil for no shift.
        package var rangeDays: [Int]?
        /// Nothing is published dated after the creation minus this many days (nil in reports
        /// written before it: 0).
        package var embargoDays: Int?
        /// `participant`: one shift per participant, the same for every recipient (nil in
        /// reports written before it, whose shifts were per recipient).
        public var scope: String?
        /// What was not published because it is dated after the publication horizon (see
        /// ``DeidentificationStats/leftOutAfterCreation``).
        package var leftOutAfterCreation: [String: Int]
        /// Exogenous records left out, by kind (see ``DeidentificationStats/leftOutExogenous``).
        package var leftOutExogenous: [String: Int]?
        /// Whether holiday day totals are masked, and how many were (nil in older reports).
        package var holidaysMasked: Int?
        /// What the published times still let an attacker learn about the shift under this
        /// policy, one sentence each (``TimeSignals``); empty when none is known.
        package var recoverableSignals: [String]?
        enum CodingKeys: String, CodingKey {
            case scope
            case maxDays = "max_days"
            case wholeWeeks = "whole_weeks"
            case rangeDays = "range_days"
            case embargoDays = "embargo_days"
            case leftOutAfterCreation = "left_out_after_creation"
            case leftOutExogenous = "left_out_exogenous"
            case holidaysMasked = "holidays_masked"
            case recoverableSignals = "recoverable_signals"
        }
    }

    /// The residual scan's outcome.
    public struct ResidualScanSummary: Sendable, Hashable, Codable {
        public var filesScanned: Int
        package var findingsCount: Int
        public var findings: [ResidualFinding]
        /// Free-text values checked against the allow-list (nil in reports written before it).
        package var freeTextValues: Int?
        /// The rules applied (``ResidualScanResult/rules``; nil in reports written before them).
        package var rules: String?
        /// Values checked for roster forms (nil in reports written before it).
        package var valuesScanned: Int?
        /// Per rule family: the values it checked and its findings (nil in reports written before it).
        package var ruleCounts: [ResidualScanResult.RuleCount]?
        enum CodingKeys: String, CodingKey {
            case findings, rules
            case filesScanned = "files_scanned"
            case findingsCount = "findings_count"
            case freeTextValues = "free_text_values"
            case valuesScanned = "values_scanned"
            case ruleCounts = "rule_counts"
        }
    }

    public var schema = DeidentificationReport.schemaID
    public var studyID: String
    public var protocolRevision: Int
    /// SHA-256 (hex) of the canonical JSON of the policy.
    public var policySHA256: String
    public var recipient: String
    /// Key name → fingerprint (never a key).
    public var keyFingerprints: [String: String]
    public var participants: Int
    public var consents: Int
    public var records: Int
    /// Every rule of the policy with the values it transformed.
    public var rules: [RuleApplication]
    /// Fields no rule names: dropped, with the values that were dropped.
    public var droppedUnruled: [FieldCount]
    /// Fields whose rule's transform does not apply to them: dropped.
    public var droppedUnsupported: [FieldCount]
    /// Direct identifiers, removed whatever the policy says.
    public var directIdentifiersRemoved: [FieldCount]
    public var dateShift: DateShiftSettings
    public var kAnonymity: KAnonymitySummary?
    /// Scrub token (`NAME`) → replacements.
    public var scrubTokens: [String: Int]
    public var residualScan: ResidualScanSummary?
    /// Policy choices below the Safe Harbor floor, and rules that were overridden.
    public var warnings: [String]
    /// What consent decided: the audience, and participants and records left out by reason (counts only).
    public var consent: ConsentOutcome?

    /// What consent decided in an export (counts by reason, never who).
    public struct ConsentOutcome: Sendable, Hashable, Codable {
        /// `study-team` or `external`.
        public var audience: String
        /// Participants left out by a consent reason (`no consent`, `consent version not accepted`, `sharing scope`) or a withdrawal.
        package var participantsLeftOut: [String: Int]
        /// Records left out, by `data type: reason`.
        package var recordsLeftOut: [String: Int]

        /// An outcome as given.
        package init(audience: String, participantsLeftOut: [String: Int], recordsLeftOut: [String: Int]) {
            self.audience = audience
            self.participantsLeftOut = participantsLeftOut
            self.recordsLeftOut = recordsLeftOut
        }

        enum CodingKeys: String, CodingKey {
            case audience
            case participantsLeftOut = "participants_left_out"
            case recordsLeftOut = "records_left_out"
        }
    }

    enum CodingKeys: String, CodingKey {
        case schema, recipient, participants, consents, records, rules, warnings, consent
        case studyID = "study_id"
        case protocolRevision = "protocol_revision"
        case policySHA256 = "policy_sha256"
        case keyFingerprints = "key_fingerprints"
        case droppedUnruled = "dropped_unruled"
        case droppedUnsupported = "dropped_unsupported"
        case directIdentifiersRemoved = "direct_identifiers_removed"
        case dateShift = "date_shift"
        case kAnonymity = "k_anonymity"
        case scrubTokens = "scrub_tokens"
        case residualScan = "residual_scan"
    }

    /// SHA-256 (hex) of `CanonicalJSON.encode(policy)`.
    package static func policySHA256(_ policy: DeidentificationPolicy) throws -> String {
        SHA256.hex(Array(try CanonicalJSON.encode(policy)))
    }

    /// The report for an export made under `studyProtocol` for `recipient`, from the stats the
    /// de-identifier accumulated. `policySHA256` defaults to ``policySHA256(_:)`` of the policy.
    package init(
        studyProtocol: StudyProtocol, recipient: String, stats: DeidentificationStats, policySHA256: String? = nil,
        keyFingerprints: [String: String] = [:], kAnonymity: KAnonymitySummary? = nil, residualScan: ResidualScanResult? = nil
    ) throws {
        let policy = studyProtocol.deidentification
        studyID = studyProtocol.id
        protocolRevision = studyProtocol.revision
        self.policySHA256 = try policySHA256 ?? Self.policySHA256(policy)
        self.recipient = recipient
        self.keyFingerprints = keyFingerprints
        participants = stats.participants
        consents = stats.consents
        records = stats.records
        rules = policy.fields.keys.sorted().compactMap { key in
            guard let rule = policy.fields[key] else { return nil }
            let values = stats.applied.values.filter { $0.rule == key }.reduce(0) { $0 + $1.values }
            return RuleApplication(field: key, transform: rule.transform, values: values)
        }
        var unruled = stats.droppedUnruled
        for field in policy.unruledFields(of: studyProtocol) where unruled[field] == nil { unruled[field] = 0 }
        droppedUnruled = unruled.keys.sorted().map { FieldCount(field: $0, values: unruled[$0] ?? 0) }
        droppedUnsupported = stats.droppedUnsupported.keys.sorted().map { FieldCount(field: $0, values: stats.droppedUnsupported[$0] ?? 0) }
        directIdentifiersRemoved = Deidentifier.directIdentifiers.map {
            FieldCount(field: $0, values: stats.directIdentifiersRemoved[$0] ?? 0)
        }
        let range = (try? DateShifter(key: Array(repeating: 0, count: 16), policy: policy.dateShift))?.range
        dateShift = DateShiftSettings(
            maxDays: policy.dateShift.maxDays, wholeWeeks: policy.dateShift.wholeWeeks, rangeDays: range.map { [$0.lowerBound, $0.upperBound] },
            embargoDays: policy.dateShift.embargoDays, scope: "participant", leftOutAfterCreation: stats.leftOutAfterCreation,
            leftOutExogenous: stats.leftOutExogenous, holidaysMasked: policy.dateShift.maskHolidays ? stats.maskedHolidayValues : nil,
            recoverableSignals: TimeSignals.recoverable(studyProtocol).map(\.statement))
        self.kAnonymity = kAnonymity
        scrubTokens = stats.scrubTokens.byName
        self.residualScan = residualScan.map {
            ResidualScanSummary(
                filesScanned: $0.filesScanned, findingsCount: $0.findings.count, findings: $0.findings, freeTextValues: $0.freeTextValues,
                rules: ResidualScanResult.rules, valuesScanned: $0.valuesScanned, ruleCounts: $0.ruleCounts)
        }
        warnings = Deidentifier.warnings(for: studyProtocol)
    }
}
