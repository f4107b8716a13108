package import CohortCore

/// What `bag-info.txt` says about an export, beyond what is computed from the payload.
package struct BagMetadata: Sendable, Hashable {
    /// `Source-Organization`: the institution running the study.
    package var sourceOrganization: String
    /// `External-Identifier`: the study id.
    public var studyID: String
    /// When the export was made; `Bagging-Date` is its UTC calendar day.
    public var createdAt: Timestamp
    /// The cohort version; `Bag-Software-Agent` is `cohort <version>`.
    package var toolVersion: String
    /// `Cohort-Protocol-Revision`.
    package var protocolRevision: Int
    /// `Cohort-Protocol-SHA256`: lowercase hex hash of the pinned protocol.
    package var protocolSHA256: String
    /// `Cohort-Recipient`: who the export is for (a recipient id, not a person's identity).
    public var recipient: String

    /// Metadata as given. Values must be single lines.
    package init(
        sourceOrganization: String, studyID: String, createdAt: Timestamp, toolVersion: String, protocolRevision: Int,
        protocolSHA256: String, recipient: String
    ) {
        self.sourceOrganization = sourceOrganization
        self.studyID = studyID
        self.createdAt = createdAt
        self.toolVersion = toolVersion
        self.protocolRevision = protocolRevision
        self.protocolSHA256 = protocolSHA256
        self.recipient = recipient
    }

    /// The UTC calendar day of `createdAt`, `YYYY-MM-DD`.
    package var baggingDate: CivilDate {
        let days = createdAt.epochMilliseconds >= 0
            ? createdAt.epochMilliseconds / 86_400_000
            : (createdAt.epochMilliseconds - 86_399_999) / 86_400_000
        return CivilDate(daysSinceEpoch: Int(days))
    }
}
