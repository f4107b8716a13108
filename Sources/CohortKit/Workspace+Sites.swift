import CohortCore
public import CohortStore

extension Workspace {
    /// The participants a command covers, by study code: every participant the store shows when
    /// `site` is nil (study-wide, the default), else only those enrolled at `site`.
    ///
    /// Throws `.invalidInput` for a malformed site name and `.notFound` when no participant is
    /// enrolled at `site` (a mistyped site would otherwise give an empty list, report or export);
    /// the hint lists the sites that do have participants (site names are organisational labels,
    /// not personal data). On PostgreSQL the store shows only the sites the role may see.
    public func participants(site: String?, withIdentities: Bool = false) throws -> [StoredParticipant] {
        let all = try store.participants(withIdentities: withIdentities)
        guard let name = try SiteName.parse(site, field: "site") else { return all }
        let chosen = all.filter { $0.participant.site == name }
        guard !chosen.isEmpty else {
            let sites = Set(all.compactMap(\.participant.site)).sorted()
            throw CohortError(
                .notFound, "no participant is enrolled at site '\(name)'", at: .init(field: "site"),
                hint: sites.isEmpty ? "no participant has a site; enroll with --site or a roster column 'site'" : "sites: \(sites.joined(separator: ", "))")
        }
        return chosen
    }
}
