/// `data/fhir/manifest.json`, shaped like a FHIR Bulk Data export manifest. `url`s are relative
/// to the manifest's folder, since the bag is read offline.
struct BulkManifest: Codable, Sendable {
    var transactionTime: String
    var request: String
    var requiresAccessToken: Bool
    var output: [Output]
    var error: [Output]

    struct Output: Codable, Sendable {
        var type: String
        var url: String
        var count: Int
    }
}
