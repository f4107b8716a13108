import CohortCompliance
import CohortCore
import CohortCrypto
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Writing to the terminal: data to stdout, messages and progress to stderr.
enum Console {
    static func print(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("error: " + text + "\n").utf8))
    }

    static func note(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Whether stderr is a terminal (progress is shown only then).
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    static var stdinIsTerminal: Bool { isatty(0) == 1 }

    /// A progress callback that redraws one stderr line, only on a terminal.
    static func progress(_ label: String) -> (@Sendable (Int) -> Void)? {
        guard stderrIsTerminal else { return nil }
        return { count in
            FileHandle.standardError.write(Data("\r\(label): \(count) rows…".utf8))
        }
    }

    static func endProgress() {
        if stderrIsTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }

    /// Asks for confirmation on a terminal; without one, refuses (scripts pass --yes).
    static func confirm(_ question: String) -> Bool {
        guard stdinIsTerminal else { return false }
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.lowercased().trimmingCharacters(in: .whitespaces))
    }
}

/// Renders rows as an aligned text table or as RFC 4180 CSV.
enum TableRenderer {
    static func table(_ header: [String], _ rows: [[String]]) -> String {
        TextTable(header: header, rows: rows).render()
    }

    static func csv(_ header: [String], _ rows: [[String]]) -> String {
        ([header] + rows).map(CSVText.record).joined()
    }
}

/// Reads the study's Ed25519 public key from a PEM file (`--public-key`).
enum PublicKeyFile {
    static func load(_ path: String) throws -> Ed25519PublicKey {
        guard let pem = FileManager.default.contents(atPath: path) else {
            throw CohortError(.notFound, "cannot read the public key", at: .init(file: path))
        }
        return try Ed25519PublicKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
    }
}
