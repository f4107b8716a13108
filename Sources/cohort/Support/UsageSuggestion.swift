import ArgumentParser
import CohortKit
import CohortCore
import Foundation

/// A clearer message for a usage error than the parser's: a mistyped subcommand or option is
/// named, with the closest real one ("did you mean"), before the parser's complaint about what is
/// then missing.
enum UsageSuggestion {
    /// The message for `arguments` (without the program name), or nil when every subcommand and
    /// option in them exists (the parser's own message then says what is wrong).
    static func message(for arguments: [String]) -> String? {
        var command: any ParsableCommand.Type = Cohort.self
        var path = ["cohort"]
        for word in arguments {
            if word == "--" { break }
            if word.hasPrefix("-") { continue }
            let subcommands = command.configuration.subcommands
            guard !subcommands.isEmpty else { break }
            if let next = subcommands.first(where: { $0._commandName == word }) {
                command = next
                path.append(word)
                continue
            }
            let names = subcommands.map { $0._commandName }
            let suggestion = Suggest.closest(to: word, in: names).map { "did you mean '\($0)'?" } ?? "its subcommands: \(names.joined(separator: ", "))"
            return "'\(word)' is not a subcommand of '\(path.joined(separator: " "))'; \(suggestion)\n" + usage(command, path)
        }
        let known = optionNames(of: command)
        for argument in arguments where argument.hasPrefix("--") && argument.count > 2 {
            let name = String(argument.split(separator: "=", maxSplits: 1).first ?? "")
            guard !known.contains(name) else { continue }
            let suggestion = Suggest.closest(to: name, in: Array(known)).map { "; did you mean '\($0)'?" } ?? ""
            return "unknown option '\(name)' for '\(path.joined(separator: " "))'\(suggestion)\n" + usage(command, path)
        }
        return nil
    }

    /// `Usage: …` and where the help is, as the parser ends its own messages.
    static func usage(_ command: any ParsableCommand.Type, _ path: [String]) -> String {
        "Usage: \(Cohort.usageString(for: command))\n  See '\(path.joined(separator: " ")) --help' for more information."
    }

    /// Every `--name` the command's help shows (hidden ones included: old names still work).
    static func optionNames(of command: any ParsableCommand.Type) -> Set<String> {
        let help = Cohort.helpMessage(for: command, includeHidden: true, columns: 10_000)
        var names: Set<String> = ["--help", "--version"]
        let bytes = Array(help.utf8)
        var i = 0
        while i + 2 < bytes.count {
            let boundary = i == 0 || !(isNameByte(bytes[i - 1]) || bytes[i - 1] == UInt8(ascii: "-"))
            if boundary, bytes[i] == UInt8(ascii: "-"), bytes[i + 1] == UInt8(ascii: "-"), isNameByte(bytes[i + 2]) {
                var j = i + 2
                while j < bytes.count, isNameByte(bytes[j]) || bytes[j] == UInt8(ascii: "-") { j += 1 }
                names.insert(String(decoding: bytes[i..<j], as: UTF8.self))
                i = j
            } else {
                i += 1
            }
        }
        return names
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (97...122).contains(byte) || (48...57).contains(byte) || (65...90).contains(byte)
    }
}
