/// CohortKit re-exports the domain vocabulary: `import CohortKit` gives a library user (and the
/// `cohort` executable) CohortCore's domain types — `CivilDate`, `Timestamp`, `StudyProtocol`,
/// `SharingScope`, `WithdrawalMode`, `CohortError`… — which CohortKit's use cases take and return.
/// Only CohortCore is re-exported: it is the shared language of every module and has no
/// dependency beyond Foundation and Yams. Types of the other modules that a caller needs are
/// wrapped by the use case that produces them (`KeysService`, `ResidualScanService`,
/// `AuditListing`, `TextOutput`…), so CohortKit stays the one contract.
@_exported public import CohortCore
