public import Foundation

/// Where records come from: chosen with `--from`, or sniffed from the input's first bytes.
public enum ImportSource: String, Sendable, Codable, CaseIterable {
    /// cohort's own long CSV / NDJSON / JSON.
    case cohort
    /// The Health app's "Export All Health Data" (export.zip, its folder, or export.xml).
    case appleHealth = "apple-health"

    /// The source `url` looks like: Apple Health for a zip or folder holding export.xml or an
    /// XML file whose root is `HealthData`; cohort's own formats otherwise.
    public static func sniff(_ url: URL) -> ImportSource {
        AppleHealthImporter.looksLikeExport(url) ? .appleHealth : .cohort
    }
}
