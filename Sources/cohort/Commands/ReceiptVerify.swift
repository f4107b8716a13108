import ArgumentParser
import CohortKit
import Foundation

extension Cohort.Receipt {
    struct Verify: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a receipt's Ed25519 signature with the study's public key.",
            discussion: """
                With -w WORKSPACE the receipt must also be in the workspace's audit trail: the participant.withdraw event \
                that issued its id, in its mode, for the participant it names (a receipt signed with a shared key but \
                never issued fails). With --public-key alone only the signature is checked, and the output says so.

                Examples:
                  cohort receipt verify receipt.txt -w my-study
                  cohort receipt verify receipt.txt --public-key my-study/keys/signing.pub.pem
                """)

        @Argument(help: "The receipt file.") var file: String
        @Option(help: "The study's public key (default: the workspace's keys/signing.pub.pem).") var publicKey: String?
        @OptionGroup var options: WorkspaceOptions

        func run() throws {
            options.output.apply()
            let crossCheck = publicKey == nil || options.workspace != nil ? try options.open(readOnly: true) : nil
            let outcome = try ReceiptCheck.verify(
                file: URL(fileURLWithPath: file), publicKeyFile: publicKey.map { URL(fileURLWithPath: $0) }, crossCheck: crossCheck,
                workspace: { try crossCheck ?? options.open() })
            Console.print((outcome.authentic ? "✔ " : "✘ ") + outcome.message)
            if !outcome.authentic { throw ExitCode(1) }
        }
    }
}
