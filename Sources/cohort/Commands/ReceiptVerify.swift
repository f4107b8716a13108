import ArgumentParser
import CohortKit
import Foundation

extension Cohort.Receipt {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a receipt's Ed25519 signature with the study's public key.",
            discussion: """
                Examples:
                  cohort receipt verify receipt.txt -w my-study
                  cohort receipt verify receipt.txt --public-key my-study/keys/signing.pub.pem
                """)

        @Argument(help: "The receipt file.") var file: String
        @Option(help: "The study's public key (default: the workspace's keys/signing.pub.pem).") var publicKey: String?
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            options.output.apply()
            let outcome = try ReceiptCheck.verify(
                file: URL(fileURLWithPath: file), publicKeyFile: publicKey.map { URL(fileURLWithPath: $0) }, workspace: { try options.open() })
            Console.print((outcome.authentic ? "✔ " : "✘ ") + outcome.message)
            if !outcome.authentic { throw ExitCode(1) }
        }
    }
}
