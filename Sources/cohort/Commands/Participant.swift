import ArgumentParser
import CohortKit
import CohortCore
import Foundation

extension Cohort {
    struct ParticipantCommand: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "participant",
            abstract: "Enroll participants, import a roster, list the roster.",
            subcommands: [Enroll.self, Import.self, List.self])
    }
}

/// Where withdrawal tokens go: `--tokens FILE` (created mode 0600), or stdout — but never a
/// redirect to a file others may read (`> tokens.csv` with the usual umask), which is refused
/// before anything is enrolled.
struct TokenOutput: ParsableArguments {
    @Option(help: ArgumentHelp("Write the withdrawal tokens to this file (mode 0600, CSV unless --format json) instead of stdout.", valueName: "file"))
    var tokens: String?

    /// Checks, before enrolling, that the tokens have a private place to go.
    func checkDestination() throws {
        if let tokens {
            if FileManager.default.fileExists(atPath: tokens) {
                throw CohortError(.conflict, "the tokens file already exists", at: .init(file: tokens), hint: "choose a new file name: tokens are shown once and never overwritten")
            }
        } else if Console.stdoutIsASharedFile {
            throw CohortError(
                .security, "stdout is a file that group or others may read, and withdrawal tokens are secrets",
                hint: "write them with --tokens FILE (created mode 0600), or redirect to a file you made private (umask 077)")
        }
    }

    /// Prints the tokens, or writes them to `--tokens` (mode 0600).
    func write(_ enrolled: [EnrolledParticipant], format: OutputFormat) throws {
        let header = ["code", "withdrawal_token"]
        let rows = enrolled.map { [$0.code, $0.withdrawalToken] }
        guard let tokens else {
            try TableRenderer.print(format, header: header, rows: rows) { try printJSON(enrolled) }
            return
        }
        let data = format == .json ? try JSONEncoder.pretty.encode(enrolled) + Data("\n".utf8) : Data(TableRenderer.csv(header, rows).utf8)
        guard FileManager.default.createFile(atPath: tokens, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CohortError(.system, "cannot write the tokens file", at: .init(file: tokens), hint: "check the folder exists and is writable")
        }
        Console.note("Wrote \(enrolled.count) withdrawal token(s) to \(tokens) (mode 0600)")
    }
}
