import ArgumentParser
import CohortKit
import Foundation

extension Cohort.Keys {
    struct InitKeys: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "init",
            abstract: "Create study.secret, pii.key and the Ed25519 signing key pair (mode 0600).",
            discussion: """
                Creates the keys in the workspace's keys/ folder, or in --keystore DIR for a keystore on its own.

                Examples:
                  cohort keys init --keystore my-keys
                  openssl pkey -in my-keys/signing.pem -noout -text   # stock OpenSSL
                """)

        @OptionGroup var keystore: KeystoreOptions
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            options.output.apply()
            let url = keystore.directory(options)
            let fingerprints = try KeysService.create(at: url)
            Console.print("Created keystore \(url.path)")
            printFingerprints(fingerprints)
        }
    }
}

/// `--keystore DIR` (a keystore on its own) instead of the workspace's keys/.
struct KeystoreOptions: ParsableArguments {
    @Option(name: .customLong("keystore"), help: ArgumentHelp("A keystore directory (default: the workspace's keys/).", valueName: "dir"))
    var keystore: String?

    @Option(name: .customLong("dir"), help: .hidden) var deprecatedDir: String?

    func validate() throws {
        if keystore != nil, deprecatedDir != nil { throw ValidationError("give --keystore only (--dir is its old name)") }
    }

    func directory(_ options: WorkspaceOptions) -> URL {
        (keystore ?? deprecatedDir).map { URL(fileURLWithPath: $0) } ?? Workspace.keysDirectory(of: options.directory)
    }
}

func printFingerprints(_ fingerprints: KeysService.Fingerprints) {
    for (label, value) in fingerprints.lines {
        Console.print("  " + label.padding(toLength: 16, withPad: " ", startingAt: 0) + " " + value)
    }
}
