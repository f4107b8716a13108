import CohortKit
import CohortCore

/// Maps error codes to the documented exit codes (docs/cli.md has the table).
enum ExitCodes {
    /// Usage error: an unknown option, a missing argument, a bad flag value, an unsupported --format.
    static let usage: Int32 = 2

    static func code(for error: CohortError) -> Int32 {
        switch error.code {
        case .invalidInput: 3
        case .notFound: 4
        case .conflict: 5
        case .security: 6
        case .integrity: 7
        case .policy: 8
        case .system: 10
        }
    }
}
