/// Which shapes of the FHIR export to write. Each holds every resource, so writing both doubles
/// the FHIR part of an export for no new content.
public enum FHIRLayout: String, Sendable, Hashable, CaseIterable {
    /// Bulk Data NDJSON, one resource type per file, with `manifest.json` (the default).
    case bulk
    /// One collection Bundle per participant (`bundles/<pseudonym>.json`).
    case bundles
    /// Both of the above.
    case both

    /// Whether the layout writes the NDJSON files and their manifest.
    public var writesBulk: Bool { self != .bundles }
    /// Whether the layout writes the per-participant collection Bundles.
    public var writesBundles: Bool { self != .bulk }
}
