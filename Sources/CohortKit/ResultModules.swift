/// The modules whose types CohortKit's use cases return — compliance reports and consent changes
/// (CohortCompliance), residual-scan results and risk assessments (CohortDeid), verification
/// reports and archives (CohortPackage), audit events and chain checks (CohortStore), import tallies
/// (CohortImport) — are
/// re-exported with CohortKit, so a caller that imports only CohortKit (the `cohort` executable)
/// can read those results' members under `MemberImportVisibility` too. Callers use them as
/// results; everything that *does* something is a CohortKit use case.
@_exported public import CohortCompliance
@_exported public import CohortDeid
@_exported public import CohortImport
@_exported public import CohortPackage
@_exported public import CohortStore
