import CohortCompliance
import CohortCore
import CohortDeid
import CohortPackage
import Foundation

/// What `cohort report` shows: the study, enrollment, consent, withdrawals, compliance and
/// (optionally) one export, as plain values; ``html()`` renders it.
///
/// Who is named: participants appear by study code only (`P-0007`) — the coordinator's own
/// label — never by name, contact, birth date, address, MRN or device (the report does not
/// decrypt identifiers at all). An erased participant appears only in counts.
public struct StudyReport: Sendable {
    /// The study as the pinned protocol describes it.
    struct Study: Sendable {
        var id: String
        var title: String
        var revision: Int
        var protocolSHA256: String
        var institution: String
        var principalInvestigator: String
        var irbBoard: String
        var irbApproval: String
        var irbExpires: CivilDate
        var durationDays: Int
        var currentConsentVersion: String
        /// The one site the report covers (`--site`); nil for the whole study.
        var site: String? = nil
    }

    /// Participants by status and the stored totals.
    struct Totals: Sendable {
        var enrolled: Int
        var active: Int
        var withdrawn: Int
        var records: Int
        var consents: Int
    }

    /// Enrollments in one week (Monday to Sunday).
    struct EnrollmentWeek: Sendable {
        var weekStart: CivilDate
        var enrolled: Int
        var cumulative: Int
    }

    /// Consent rows of one document version.
    struct ConsentVersion: Sendable {
        var version: String
        /// Rows of this version in force (status active).
        var inForce: Int
        var superseded: Int
        var withdrawn: Int
    }

    /// Withdrawals of one mode.
    struct WithdrawalCount: Sendable {
        var mode: WithdrawalMode
        var total: Int
        var byParticipant: Int
        var byStaff: Int
    }

    /// One participant's row of a rule's heatmap.
    struct HeatmapRow: Sendable {
        var code: String
        /// First day of `days`.
        var firstDay: CivilDate
        /// One entry per counted day from the enrollment day: met or not.
        var days: [Bool]
        var rate: Double?
    }

    /// One calendar week of a rule's trend: pooled over the participants counted that week.
    struct TrendWeek: Sendable {
        var weekStart: CivilDate
        var daysMet: Int
        var daysCounted: Int
        var rate: Double? { daysCounted > 0 ? Double(daysMet) / Double(daysCounted) : nil }
    }

    /// One participant below a rule's threshold.
    struct BelowThreshold: Sendable {
        var code: String
        var ruleID: String
        var rate: Double
        var threshold: Double
        var daysMet: Int
        var daysExpected: Int
        var missedLastClosedDay: Bool
        var ongoing: Bool
    }

    /// One compliance rule across the cohort.
    struct Rule: Sendable {
        var summary: ComplianceReport.RuleSummary
        var heatmap: [HeatmapRow]
        /// Participants with counted days who are not in `heatmap` (it shows the lowest rates first, up to a limit).
        var heatmapOmitted: Int
        var trend: [TrendWeek]
    }

    /// One export archive, as its signed manifest states it and the verifier found it.
    struct Export: Sendable {
        var archive: String
        var verification: VerificationReport
        /// The manifest, when it could be read (its signature is the verifier's `signature` check).
        var manifest: ExportManifest?
        /// `data/reports/deidentification.json` of the bag, when the archive extracted.
        var deidentification: DeidentificationReport?
    }

    var study: Study
    var generatedAt: Timestamp
    var asOf: Timestamp
    var totals: Totals
    var enrollment: [EnrollmentWeek]
    var consentVersions: [ConsentVersion]
    /// Participants with more than one consent row, and the rows after each one's first.
    var reconsentedParticipants: Int
    var reconsents: Int
    var withdrawals: [WithdrawalCount]
    var rules: [Rule]
    var belowThreshold: [BelowThreshold]
    var export: Export?

    /// Whether the export given passed every verification check; nil without an export.
    public var exportVerified: Bool? { export?.verification.passed }

    /// Rows a heatmap shows at most (the lowest rates first); the rest are counted, not drawn.
    static let heatmapRowLimit = 200
    /// Days a heatmap shows at most (the latest ones).
    static let heatmapDayLimit = 400
}
