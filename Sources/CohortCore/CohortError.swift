/// An error cohort reports to a person: what failed, where, and what to do about it.
///
/// Messages never carry an identifier value, a key, or a record value. Where the reader is the
/// coordinator a study code such as `P-0007` may appear; in audit events and exports only
/// internal ids or pseudonyms do.
public struct CohortError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable category callers branch on and the CLI maps to an exit code.
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// Input (a file, a flag, a row) does not have the expected shape or value.
        case invalidInput = "invalid_input"
        /// Something named does not exist (file, participant, version, workspace).
        case notFound = "not_found"
        /// The request conflicts with existing state (duplicate, already withdrawn, schema too new).
        case conflict
        /// A key, signature, digest or permission check failed.
        case security
        /// An integrity check failed: audit chain, archive, manifest, bag.
        case integrity
        /// The operating system or a library refused (I/O, OpenSSL, zlib, SQLite).
        case system
        /// Policy forbids the operation (consent missing, withdrawn, residual PII found).
        case policy
    }

    /// Where in an input the problem is.
    public struct Location: Sendable, Equatable, Codable, CustomStringConvertible {
        public var file: String?
        public var line: Int?
        public var field: String?

        package init(file: String? = nil, line: Int? = nil, field: String? = nil) {
            self.file = file
            self.line = line
            self.field = field
        }

        public var description: String {
            var parts: [String] = []
            if let file { parts.append(file) }
            if let line { parts.append(String(line)) }
            var text = parts.joined(separator: ":")
            if let field { text += text.isEmpty ? field : ": \(field)" }
            return text
        }
    }

    public var code: Code
    /// What failed, in one sentence, without identifier or record values.
    public var message: String
    /// Where, when the problem is in an input.
    public var location: Location?
    /// What to do about it.
    public var hint: String?
    /// A description of the underlying cause (already free of secrets).
    public var underlying: String?
    /// The cause in a form callers branch on (never by matching ``message`` or ``underlying``).
    public var cause: Cause?

    /// Causes callers branch on. Each names where or why, never a stored value.
    public enum Cause: Sendable, Equatable {
        /// A database server refused a statement with this SQLSTATE (`23505`: unique violation).
        case sqlState(String)
        /// A stored row's column is missing or malformed: the table and column.
        case malformedColumn(table: String, column: String)
        /// A record starts before its participant's enrollment day.
        case recordBeforeEnrollment
        /// A record starts after its participant's study period.
        case recordAfterStudyPeriod
    }

    public init(
        _ code: Code, _ message: String, at location: Location? = nil, hint: String? = nil, underlying: String? = nil
    ) {
        self.init(code, message, at: location, hint: hint, underlying: underlying, cause: nil)
    }

    /// An error with a typed cause callers branch on.
    public init(
        _ code: Code, _ message: String, at location: Location? = nil, hint: String? = nil, underlying: String? = nil, cause: Cause?
    ) {
        self.code = code
        self.message = message
        self.location = location
        self.hint = hint
        self.underlying = underlying
        self.cause = cause
    }

    public var description: String {
        var text = ""
        if let location, !location.description.isEmpty { text += "\(location.description): " }
        text += message
        if let underlying { text += " (\(underlying))" }
        if let hint { text += "\n  hint: \(hint)" }
        return text
    }
}

extension CohortError {
    public static func invalid(_ message: String, file: String? = nil, line: Int? = nil, field: String? = nil, hint: String? = nil)
        -> CohortError
    {
        CohortError(.invalidInput, message, at: Location(file: file, line: line, field: field), hint: hint)
    }
}
