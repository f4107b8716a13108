import Foundation
import Testing

@testable import CohortKit

struct ShellQuoteTests {
    /// A quoted word is that word again after a POSIX shell reads it (`/bin/sh -c 'printf %s WORD'`),
    /// for both quoting functions, a quote with a combining mark included.
    @Test(arguments: ["plain", "it's here", "'", "'\u{301}; echo injected", "a'\u{301}'b", "🙂 'x'", "$HOME `id`", "-n"])
    func aShellReadsTheWordBack(word: String) throws {
        for quoted in [ShellQuote.quote(word), ReportPage.shellQuoted(word)] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "printf '%s' " + quoted]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            #expect(Array(output) == Array(word.utf8), "\(quoted)")
        }
    }
}
