import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to the terminal: data to stdout, messages and progress to stderr.
enum Console {
    private static let quietFlag = Atomic<Bool>(false)

    /// `--quiet`: notes and progress are not written (errors and data output are).
    static var quiet: Bool {
        get { quietFlag.load(ordering: .relaxed) }
        set { quietFlag.store(newValue, ordering: .relaxed) }
    }

    static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("error: " + text + "\n").utf8))
    }

    /// A message for the person at the terminal (stderr); silenced by `--quiet`.
    static func note(_ text: String) {
        if quiet { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Whether stderr is a terminal (progress is shown only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    static var stdinIsTerminal: Bool { isatty(0) == 1 }

    /// Whether a progress bar may be drawn: stderr is a terminal and `--quiet` was not given.
    static var showsProgress: Bool { stderrIsTerminal && !quiet }

    /// Whether stdout is a regular file that group or others may read (a shell redirect with the
    /// usual umask): secrets such as withdrawal tokens are not written there.
    static var stdoutIsASharedFile: Bool {
        var info = stat()
        guard fstat(1, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return info.st_mode & 0o077 != 0
    }

    /// Asks for confirmation on a terminal; without one, refuses (scripts pass --yes).
    static func confirm(_ question: String) -> Bool {
        guard stdinIsTerminal else { return false }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.lowercased().trimmingCharacters(in: .whitespaces))
    }
}

extension JSONEncoder {
    /// Indented JSON with sorted keys, as every `--format json` prints.
    static var pretty: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return e
    }
}

/// Prints a value as indented JSON on stdout.
func printJSON(_ value: some Encodable) throws {
    Console.print(String(decoding: try JSONEncoder.pretty.encode(value), as: UTF8.self))
}
