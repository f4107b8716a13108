import ArgumentParser
import CohortKit
import CohortStore
import Foundation

extension Cohort.SiteCommand {
    struct SiteRevokeKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke-key",
            abstract: "Revoke one signing key of a site (a lost laptop): it signs nothing the study accepts from now on.",
            discussion: """
                Run from the study owner's workspace. Records site.key_revoked in the audit trail, signed by the owner's key \
                (only the owner's revocations count; on PostgreSQL only the owner can append one). From that event on, \
                `audit verify`, `verify -w` and `receipt verify -w` refuse checkpoints, exports and receipts the key signs; what \
                it signed before stays valid, and the workspace holding it is refused (exit 6). The site's identifier \
                key-encryption key is not changed: when a coordinator leaves, use `cohort site rotate-key` (it revokes every \
                earlier key of the site itself). KEY is the fingerprint `site invite` printed (SHA256:…).

                Examples:
                  cohort site revoke-key --site site-a --key SHA256:3f9a… --dry-run -w study
                  cohort site revoke-key --site site-a --key SHA256:3f9a… --yes -w study
                """)

        @Option(help: "The site the key is registered for.") var site: String
        @Option(help: ArgumentHelp("The key's fingerprint (SHA256:…).", valueName: "fingerprint")) var key: String
        @Flag(help: "Do not ask for confirmation.") var yes = false
        @Flag(help: "Say which key would be revoked; change nothing.") var dryRun = false
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let owner = try options.open()
            let keys = try owner.signingKeysToRevoke(site: site, fingerprint: key)
            let what = keys.map { "site \(site)'s key \($0.fingerprint) (registered at audit event \($0.seq))" }.joined(separator: ", ")
            if dryRun {
                Console.print("Dry run: would revoke \(what). Nothing was changed.")
                return
            }
            if !yes {
                guard Console.confirm("Revoke \(what)? It signs nothing the study accepts from then on.") else {
                    Console.note("Nothing was changed. (Pass --yes to confirm without a prompt.)")
                    throw ExitCode(1)
                }
            }
            for event in try owner.revokeSigningKeys(keys, reason: "revoke-key") {
                Console.print("Revoked site \(site)'s key \(event.details["key_fingerprint"] ?? "") at audit event \(event.seq)")
            }
            Console.print("  what it signed before that event stays valid; a workspace holding it is refused from now on")
        }
    }
}
