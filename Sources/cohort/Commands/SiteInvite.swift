import ArgumentParser
import CohortKit
import Foundation

extension Cohort.SiteCommand {
    struct SiteInvite: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "invite",
            abstract: "Make a site coordinator's workspace folder: the site's own new signing key, registered in the audit trail.",
            discussion: """
                Run from the study owner's workspace (the one `cohort init --database` made). Writes DIR (mode 0700): keys/ with \
                a NEW Ed25519 signing key for the site (registered by the owner's key in the audit trail as site.key_registered: \
                it signs that site's checkpoints, exports and receipts only), a NEW pii.key that is a key-encryption key of the \
                site (it unwraps that site's identifier data key and no other; recorded as site.key_kek), the study's \
                pseudonym/date-shift secret (see docs/multi-site.md for who holds what), store.json naming the database (as --role when given), the owner's signed \
                audit.head, and site.json. No owner signing key, no other site's key. Hand DIR to the coordinator over a secure \
                channel keeping its modes (scp -rp, tar); they run `cohort site join DIR -w WORKSPACE`. A coordinator's workspace \
                cannot invite anyone (exit 6).

                Examples:
                  cohort site invite --site site-a --role alice \\
                    --out /secure/site-a-invitation -w study
                  scp -rp /secure/site-a-invitation alice@site-a.example.org:
                  cohort site invite --study-wide --role monitor \\
                    --out /secure/monitor -w study
                """)

        @Option(help: "The site the coordinator works for (its group role must exist: `cohort site add`).") var site: String?
        @Flag(help: "Invite a study-wide role (a monitor): its key signs for every site.") var studyWide = false
        @Option(help: ArgumentHelp("The folder to write (must not exist).", valueName: "dir")) var out: String
        @Option(help: ArgumentHelp("The coordinator's PostgreSQL login role, for store.json's URL (default: the owner's URL; the coordinator sets COHORT_DATABASE_URL).", valueName: "login"))
        var role: String?
        @OptionGroup var options: WorkspaceOptions

        func validate() throws {
            if (site == nil) == !studyWide { throw ValidationError("give --site NAME or --study-wide (not both)") }
        }

        func run() throws {
            let owner = try options.open()
            let invited = try SiteInvitation.invite(from: owner, site: site, role: role, to: URL(fileURLWithPath: out))
            let scope = invited.site.map { "site \($0)" } ?? "every site (study-wide)"
            Console.print("Invitation for \(scope) written to \(invited.folder.path)")
            Console.print("  signing key \(invited.keyFingerprint), registered for \(scope) at audit event \(invited.registrationSeq)")
            Console.print("  next: copy the folder to the coordinator keeping its modes (scp -rp); they run `cohort site join \(invited.folder.lastPathComponent) -w WORKSPACE`")
        }
    }

    struct SiteRotateKey: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Give a site a new identifier key-encryption key (a coordinator left): earlier workspaces of the site stop opening its identifiers.",
            discussion: """
                Run from the study owner's workspace. Makes a new key-encryption key for the site, re-wraps the site's identifier \
                data key under it and deletes every earlier wrap for the site's coordinators (recorded as site.key_kek with \
                rotated=true); no stored row is re-encrypted. Revokes every earlier signing key of the site (site.key_revoked, \
                signed by the owner's key): from then on what they sign — checkpoints, exports, receipts — is refused by \
                `audit verify`, `verify -w` and `receipt verify -w`; what they signed before stays valid. Writes DIR as `cohort site invite` does (a new signing key too), for \
                the site's remaining coordinators to `cohort site join`. A workspace holding an earlier key of the site is refused \
                from then on (exit 6).

                Examples:
                  cohort site rotate-key --site site-a --role bob \\
                    --out /secure/site-a-new -w study
                  scp -rp /secure/site-a-new bob@site-a.example.org:
                """)

        @Option(help: "The site whose key-encryption key to replace.") var site: String
        @Option(help: ArgumentHelp("The folder to write (must not exist).", valueName: "dir")) var out: String
        @Option(help: ArgumentHelp("The coordinator's PostgreSQL login role, for store.json's URL.", valueName: "login")) var role: String?
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            let owner = try options.open()
            let invited = try SiteInvitation.invite(from: owner, site: site, role: role, to: URL(fileURLWithPath: out), rotating: true)
            Console.print("Site \(site)'s identifier key re-wrapped under a new key-encryption key; earlier workspaces of the site no longer open it (no row re-encrypted)")
            for old in invited.revoked {
                Console.print("  revoked the site's earlier signing key \(old.fingerprint) at audit event \(old.seq)")
            }
            Console.print("  new invitation written to \(invited.folder.path) (signing key \(invited.keyFingerprint), audit event \(invited.registrationSeq))")
            Console.print("  next: the site's coordinators join again: `cohort site join \(invited.folder.lastPathComponent) -w WORKSPACE`")
        }
    }

    struct SiteJoin: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "join",
            abstract: "Install a site invitation folder as this coordinator's workspace, and check it connects as the site's coordinator.",
            discussion: """
                Copies DIR (made by `cohort site invite`) to the workspace folder -w (which must not exist): folders 0700, files \
                0600. Refuses an invitation whose folder or files group or others may access (its keys may have been read: ask the \
                owner for a new one). Then opens the workspace, connecting as store.json's role or $COHORT_DATABASE_URL, and checks \
                that this role is a member of the site's role (not the owner's), and that the signing key is the one the audit \
                trail registers for the site. Nothing stays at -w when a check fails.

                Examples:
                  cohort site join site-a-invitation -w ~/axspa-site-a
                  COHORT_DATABASE_URL=postgresql://alice@db.example.org/axspa \\
                    cohort site join site-a-invitation -w ~/axspa-site-a
                """)

        @Argument(help: ArgumentHelp("The invitation folder.", valueName: "dir")) var invitation: String
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            options.output.apply()
            guard let workspace = options.workspace else { throw ValidationError("give -w WORKSPACE: the folder to install the site's workspace in") }
            let joined = try SiteInvitation.join(URL(fileURLWithPath: invitation), into: URL(fileURLWithPath: workspace), actor: options.actorName)
            let scope = joined.site.map { "site \($0)" } ?? "every site (study-wide)"
            Console.print("Joined \(scope) as database role \(joined.role): workspace \(joined.workspace.path)")
            Console.print("  signing key \(joined.keyFingerprint) (registered for \(scope))")
        }
    }
}
