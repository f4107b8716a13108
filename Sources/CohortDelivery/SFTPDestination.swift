import CohortCore

/// Where `cohort deliver --to` sends an export: `sftp://USER@HOST[:PORT]/PATH`.
///
/// The path is absolute on the server; `/~/dir` is `dir` under the login's home directory.
/// No password may be written in the URL (authentication is by key only).
public struct SFTPDestination: Sendable, Hashable, CustomStringConvertible {
    public var user: String
    public var host: String
    public var port: Int
    /// The folder on the server: absolute, or relative to the home directory when ``fromHome``.
    public var path: String
    /// `/~/…`: `path` is relative to the login's home directory.
    public var fromHome: Bool

    /// Parses `sftp://USER@HOST[:PORT]/PATH` (IPv6 hosts in brackets).
    public init(parsing text: String) throws {
        func refuse(_ why: String) -> CohortError {
            CohortError(.invalidInput, "--to is not a usable sftp:// destination: \(why)", at: .init(field: "to"), hint: "write sftp://USER@HOST[:PORT]/PATH (e.g. sftp://alice@portal.example.org/inbox, or /~/inbox for a folder in the home directory)")
        }
        guard text.hasPrefix("sftp://") else { throw refuse("it must start with sftp://") }
        let rest = text.dropFirst("sftp://".count)
        guard let slash = rest.firstIndex(of: "/") else { throw refuse("it names no folder on the server") }
        let authority = rest[..<slash]
        var path = String(rest[slash...])
        guard let at = authority.lastIndex(of: "@") else { throw refuse("it names no user (USER@HOST)") }
        let user = String(authority[..<at])
        guard !user.isEmpty, !user.contains(":") else {
            throw refuse(user.contains(":") ? "a password may not be written in the URL; cohort authenticates with --identity KEY" : "the user is empty")
        }
        guard user.allSatisfy({ $0.isLetter || $0.isNumber || "._-".contains($0) }), user.first != "-" else {
            throw refuse("the user may hold letters, digits, . _ - only")
        }
        var hostPort = authority[authority.index(after: at)...]
        var port = 22
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw refuse("an IPv6 host needs its closing ]") }
            let after = hostPort[hostPort.index(after: close)...]
            if after.hasPrefix(":") {
                guard let value = Int(after.dropFirst()), (1...65535).contains(value) else { throw refuse("the port is not a number from 1 to 65535") }
                port = value
            } else if !after.isEmpty {
                throw refuse("unexpected text after the IPv6 host")
            }
            hostPort = hostPort[hostPort.index(after: hostPort.startIndex)..<close]
        } else if let colon = hostPort.lastIndex(of: ":") {
            guard let value = Int(hostPort[hostPort.index(after: colon)...]), (1...65535).contains(value) else {
                throw refuse("the port is not a number from 1 to 65535")
            }
            port = value
            hostPort = hostPort[..<colon]
        }
        let host = String(hostPort)
        guard !host.isEmpty, host.first != "-", host.allSatisfy({ $0.isLetter || $0.isNumber || ".-:".contains($0) }) else {
            throw refuse("the host is not a host name or address")
        }
        var fromHome = false
        if path == "/~" || path.hasPrefix("/~/") {
            fromHome = true
            path = String(path.dropFirst(path == "/~" ? 2 : 3))
        }
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        guard !path.split(separator: "/").contains(".."), !path.contains("\0") else { throw refuse("the path may not contain ..") }
        self.user = user
        self.host = host
        self.port = port
        self.path = path
        self.fromHome = fromHome
    }

    /// `sftp://user@host:port/path` as given (no secret is ever part of it).
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "sftp://\(user)@\(shownHost):\(port)" + (fromHome ? "/~" + (path.isEmpty ? "" : "/" + path) : path)
    }

    /// The server's name in a known-hosts file: `host`, or `[host]:port` off port 22.
    public var knownHostsName: String { port == 22 ? host : "[\(host)]:\(port)" }
}
