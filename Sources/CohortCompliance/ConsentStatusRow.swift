public import CohortCore
public import Foundation

/// One line of `cohort consent status`: where a participant's consent stands.
public struct ConsentStatusRow: Sendable, Hashable, Codable {
    /// Where a participant's consent stands.
    public enum Standing: String, Sendable, Hashable, Codable, CaseIterable {
        /// A consent is in force.
        case active
        /// No consent is in force.
        case none
        /// The participant withdrew (see `withdrawal` for the mode).
        case withdrawn
    }

    /// Study code (`P-0007`).
    public var code: String
    /// Internal id.
    public var participantID: UUID
    /// Version of the consent in force (for a withdrawn participant: the last one they signed).
    public var version: String?
    /// Local signing day in the participant's time zone.
    public var signedOn: CivilDate?
    /// Sharing scope agreed.
    public var sharing: SharingScope?
    /// Where the consent stands.
    public var status: Standing
    /// The withdrawal mode, when withdrawn.
    public var withdrawal: WithdrawalMode?
    /// Whether the participant must re-consent before more data is accepted.
    public var reconsentDue: Bool
    /// The export audiences their consent allows now (empty: in no export).
    public var audiences: [ExportAudience] = []
    /// The data types the consent in force covers (for records from its signing on; earlier
    /// records fall under the consent that governed them).
    public var dataTypes: [DataType] = []
    /// Whether the protocol still accepts the version of the consent in force (nil without one).
    public var versionAccepted: Bool?

    /// Creates a row.
    package init(
        code: String, participantID: UUID, version: String?, signedOn: CivilDate?, sharing: SharingScope?, status: Standing,
        withdrawal: WithdrawalMode?, reconsentDue: Bool
    ) {
        self.code = code
        self.participantID = participantID
        self.version = version
        self.signedOn = signedOn
        self.sharing = sharing
        self.status = status
        self.withdrawal = withdrawal
        self.reconsentDue = reconsentDue
    }

    enum CodingKeys: String, CodingKey {
        case code, version, sharing, status, withdrawal
        case participantID = "participant_id"
        case signedOn = "signed_on"
        case reconsentDue = "reconsent_due"
        case audiences
        case dataTypes = "data_types"
        case versionAccepted = "version_accepted"
    }

    /// The cells of this row, in `csvHeader` order (empty cells for missing values).
    public var cells: [String] {
        [
            code, version ?? "", signedOn?.description ?? "", sharing?.rawValue ?? "", status.rawValue, withdrawal?.rawValue ?? "",
            String(reconsentDue), audiences.map(\.rawValue).joined(separator: ";"), dataTypes.map(\.rawValue).joined(separator: ";"),
        ]
    }

    /// Column names for CSV output.
    package static let csvHeader = ["participant", "version", "signed_on", "sharing", "status", "withdrawal", "reconsent_due", "audiences", "data_types"]

    /// CSV rows: the header, then one row per participant.
    public static func csvRows(_ rows: [ConsentStatusRow]) -> [[String]] { [csvHeader] + rows.map(\.cells) }

    /// A table for `--format table`.
    public static func table(_ rows: [ConsentStatusRow]) -> TextTable {
        TextTable(
            header: ["participant", "version", "signed on", "sharing", "status", "withdrawal", "re-consent due", "exportable to", "data types"],
            rows: rows.map { row in
                [
                    row.code, row.version ?? "-", row.signedOn?.description ?? "-", row.sharing?.rawValue ?? "-", row.status.rawValue,
                    row.withdrawal?.rawValue ?? "-", row.reconsentDue ? "yes" : "no",
                    row.audiences.isEmpty ? (row.versionAccepted == false ? "none (version not accepted)" : "none") : row.audiences.map(\.rawValue).joined(separator: ", "),
                    row.dataTypes.isEmpty ? "-" : row.dataTypes.map(\.rawValue).joined(separator: ", "),
                ]
            })
    }
}
