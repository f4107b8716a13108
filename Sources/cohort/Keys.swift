import ArgumentParser
import CohortCrypto
import CohortKit
import Foundation

extension Cohort {
    struct Keys: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the keystore or show key fingerprints.",
            subcommands: [InitKeys.self, Show.self])

        struct InitKeys: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "init",
                abstract: "Create study.secret, pii.key and the Ed25519 signing key pair (mode 0600).",
                discussion: """
                    Examples:
                      cohort keys init --dir my-keys
                      openssl pkey -in my-keys/signing.pem -noout -text   # stock OpenSSL reads the key
                    """)

            @Option(help: "The keystore directory (default: the workspace's keys/).")
            var dir: String?

            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let url = dir.map { URL(fileURLWithPath: $0) } ?? Workspace.keysDirectory(of: options.directory)
                let keystore = try Keystore.create(at: url)
                Console.print("Created keystore \(url.path)")
                print(keystore.fingerprints)
            }
        }

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Print key fingerprints (never the keys).",
                discussion: "Examples:\n  cohort keys show -w my-study\n  cohort keys show --dir my-keys --format json")

            @Option(help: "The keystore directory (default: the workspace's keys/).")
            var dir: String?

            @Option(help: "table or json.")
            var format: OutputFormat = .table

            @OptionGroup var options: WorkspaceOptions

            func run() throws {
                let url = dir.map { URL(fileURLWithPath: $0) } ?? Workspace.keysDirectory(of: options.directory)
                let keystore = try Keystore.load(from: url)
                if format == .json {
                    let data = try JSONEncoder.pretty.encode(keystore.fingerprints)
                    Console.print(String(decoding: data, as: UTF8.self))
                } else {
                    print(keystore.fingerprints)
                }
            }
        }
    }
}

func print(_ fp: KeyFingerprints) {
    Console.print("  study.secret     \(fp.studySecret)")
    Console.print("  pii.key          \(fp.piiKey)")
    Console.print("  signing key      \(fp.signing)  (Ed25519)")
}

extension JSONEncoder {
    static var pretty: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return e
    }
}
