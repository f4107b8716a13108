import Foundation
import Testing

/// Every `cohort …` command the sources print (error hints, help examples, next steps) names a
/// command the CLI has and flags that command takes: each is run through the real parser's
/// `--help`, so a retired flag (`cohort init --dir`) fails here instead of misleading a user.
@Suite struct HintCommandsCLITests {
    /// A `cohort …` command written in a source string: the words after `cohort` and its flags.
    struct Mention: Hashable, CustomStringConvertible {
        var words: [String]
        var flags: [String]
        var file: String
        var description: String { "\(file): cohort \(words.joined(separator: " ")) \(flags.joined(separator: " "))" }
    }

    /// The mentions in the string literals and doc comments of `Sources/`.
    static func mentions() throws -> [Mention] {
        let sources = CLI.repoRoot.appendingPathComponent("Sources")
        guard let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil) else { return [] }
        // From `cohort ` to the end of the quoted or backquoted text (or the line).
        let pattern = try NSRegularExpression(pattern: #"\bcohort ((?:[a-z][a-z-]*)(?: [a-z][a-z-]*)?)([^"`\n]*)"#)
        let flag = try NSRegularExpression(pattern: #"(?<![\w-])(--[a-z][a-z0-9-]*)"#)
        var found: Set<Mention> = []
        for case let url as URL in files where url.pathExtension == "swift" {
            let text = try String(contentsOf: url, encoding: .utf8)
            let relative = String(url.path.dropFirst(CLI.repoRoot.path.count + 1))
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let words = Range(match.range(at: 1), in: text), let rest = Range(match.range(at: 2), in: text) else { continue }
                // Interpolations are values, not flags.
                let tail = String(text[rest]).replacingOccurrences(of: #"\\\([^)]*\)"#, with: "", options: .regularExpression)
                let flags = flag.matches(in: tail, range: NSRange(tail.startIndex..., in: tail)).compactMap { m in
                    Range(m.range(at: 1), in: tail).map { String(tail[$0]) }
                }
                found.insert(Mention(words: text[words].split(separator: " ").map(String.init), flags: flags, file: relative))
            }
        }
        return found.sorted { $0.description < $1.description }
    }

    /// The top-level commands `cohort --help` lists.
    static func topLevelCommands(_ cli: CLI) throws -> Set<String> {
        let help = try cli.run(["--help"]).stdout
        let section = help.components(separatedBy: "SUBCOMMANDS:").dropFirst().first ?? ""
        return Set(section.split(separator: "\n").compactMap { line in
            line.hasPrefix("  ") ? line.split(separator: " ").first.map(String.init) : nil
        })
    }

    @Test func everyMentionedCommandAndFlagExists() throws {
        let cli = try CLI()
        let commands = try Self.topLevelCommands(cli)
        #expect(commands.contains("export") && commands.contains("init"), "the subcommand list was not read: \(commands.sorted())")
        var helps: [[String]: String?] = [:]
        func help(_ path: [String]) throws -> String? {
            if let cached = helps[path] { return cached }
            let result = try cli.run(path + ["--help"])
            let text = result.status == 0 ? result.stdout : nil
            helps[path] = text
            return text
        }
        let mentions = try Self.mentions()
        #expect(mentions.count > 40, "found only \(mentions.count) mentions")
        var checked = 0
        for mention in mentions {
            // Prose ("cohort does not…") names no command.
            guard let first = mention.words.first, commands.contains(first) else { continue }
            // The longest command path the parser knows: `data import` or `export`.
            let path: [String]
            if mention.words.count > 1, try help(mention.words) != nil {
                path = mention.words
            } else {
                path = [first]
            }
            guard let text = try help(path) else {
                Issue.record("\(mention): `cohort \(path.joined(separator: " ")) --help` fails")
                continue
            }
            for flag in mention.flags where text.range(of: #"(?<![\w-])"# + flag + #"(?![\w-])"#, options: .regularExpression) == nil {
                Issue.record("\(mention): `cohort \(path.joined(separator: " "))` has no \(flag) (see its --help)")
            }
            checked += 1
        }
        #expect(checked > 40)
    }
}
