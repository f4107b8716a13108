import CohortCrypto

/// The keys a store seals and opens identifiers with (issue #30, per-site identifier keys).
///
/// - SQLite (single-site) and a PostgreSQL study without per-site data keys: one key, the
///   workspace's `pii.key`, for everything — as before.
/// - PostgreSQL with per-site data keys (table `site_data_keys`): each site's identifiers,
///   notes, consent evidence and redactable texts about its participants are sealed with that
///   site's data key. The owner's workspace (study-wide `pii.key`) unwraps every site's data key;
///   a site's workspace (its `pii.key` is the site's key-encryption key) unwraps its own only.
///   Texts about no participant are sealed with ``defaultKey``: the study key in the owner's
///   workspace, the site's data key in a site's (the owner opens both).
///
/// Opening tries every key the ring holds (AES-GCM refuses a wrong key), so which key sealed a
/// value needs no column: a value sealed under a key this workspace does not hold does not open.
package struct PIIKeyRing: Sendable {
    /// The key for texts about no participant (and for a participant whose site has no data key).
    package let defaultKey: [UInt8]
    /// The data key of each site this workspace unwrapped.
    package let siteKeys: [String: [UInt8]]
    /// The site whose key-encryption key this workspace holds (nil: the owner or single-site).
    package let ownSite: String?

    package init(defaultKey: [UInt8], siteKeys: [String: [UInt8]] = [:], ownSite: String? = nil) {
        self.defaultKey = defaultKey
        self.siteKeys = siteKeys
        self.ownSite = ownSite
    }

    /// One key for everything (SQLite, or PostgreSQL before per-site keys).
    package static func single(_ key: [UInt8]) -> PIIKeyRing { PIIKeyRing(defaultKey: key) }

    /// The key that seals a value about a participant of `site` (nil: no participant, or a
    /// single-site study).
    package func key(forSite site: String?) -> [UInt8] {
        if let site, let key = siteKeys[site] { return key }
        return defaultKey
    }

    /// Every key to try when opening, the default first.
    package var all: [[UInt8]] {
        [defaultKey] + siteKeys.keys.sorted().compactMap { siteKeys[$0] }.filter { $0 != defaultKey }
    }

    /// The associated data a site's data key is wrapped with: which site and which holder
    /// (`study`: the owner's study-wide `pii.key`; `site:<fingerprint>`: a key-encryption key of
    /// the site, the `pii.key` of a coordinator's workspace), so a
    /// wrapped key copied into another row does not open.
    package static func wrapAAD(site: String, holder: String) -> [UInt8] {
        Array("cohort/site-data-key@1 site=\(site) holder=\(holder)".utf8)
    }

    /// `dataKey` wrapped (AES-256-GCM) under `wrappingKey` for `site` and `holder`.
    package static func wrap(_ dataKey: [UInt8], with wrappingKey: [UInt8], site: String, holder: String) throws -> [UInt8] {
        try AESGCM.seal(dataKey, key: wrappingKey, authenticating: wrapAAD(site: site, holder: holder))
    }

    /// The data key inside `wrapped`, or nil when `wrappingKey` does not open it.
    /// The holder name of key-encryption key whose `pii.key` fingerprint is `fingerprint`.
    package static func siteHolder(fingerprint: String) -> String { "site:" + fingerprint }

    package static func unwrap(_ wrapped: [UInt8], with wrappingKey: [UInt8], site: String, holder: String) -> [UInt8]? {
        try? AESGCM.open(wrapped, key: wrappingKey, authenticating: wrapAAD(site: site, holder: holder))
    }
}
