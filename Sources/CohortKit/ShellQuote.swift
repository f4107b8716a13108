import CohortCore
import Foundation
/// Quotes words for a POSIX shell, so a printed command can be copied and run as it is.
public enum ShellQuote {
    /// `word` unchanged when it holds only characters no shell treats specially; otherwise in
    /// single quotes, with each `'` written as `'\''`.
    public static func quote(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./-_")
        if !word.isEmpty, word.allSatisfy({ safe.contains($0) }) { return word }
        return "'" + ASCIIEscaping.replacing(0x27, with: "'\\''", in: word) + "'"
    }
}
