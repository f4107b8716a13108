import CohortCore
import Foundation

/// One connection through the system OpenSSH client, `ssh -s … sftp`, in batch mode: the host
/// key must be in the pinned known-hosts file (`StrictHostKeyChecking=yes`, no other file, the
/// user's ssh configuration ignored), authentication by key only, never a prompt.
///
/// SSH verifies the server's host key during key exchange, before the client authenticates, so
/// an unknown or changed key ends the connection before any credential is offered. `ssh -v`
/// writes the key's fingerprint (`Server host key: TYPE SHA256:…`) to its log, a private
/// temporary file read after the connection ends; nothing else of it is kept.
final class SSHConnection {
    /// Why a connection failed, as `export.delivery_failed` records it.
    enum Failure: String, Sendable {
        case unknownHostKey = "unknown host key"
        case changedHostKey = "changed host key"
        case authentication
        case network
    }

    private let process: Process
    private let toServer: Int32
    private let fromServer: Int32
    private let logURL: URL
    private var closed = false

    /// The host key fingerprint seen so far (`SHA256:…`), once the log names it.
    var hostKeyFingerprint: String? { Self.fingerprint(inLog: log()) }

    init(destination: SFTPDestination, knownHosts: String, identity: String?, connectTimeout: Int, logDirectory: URL) throws {
        signal(SIGPIPE, SIG_IGN)
        guard let ssh = Self.executable("ssh") else {
            throw CohortError(.system, "the OpenSSH client (ssh) is not installed", hint: "install it: apt-get install openssh-client")
        }
        logURL = logDirectory.appendingPathComponent("ssh-\(UUID().uuidString).log")
        guard FileManager.default.createFile(atPath: logURL.path, contents: nil, attributes: [.posixPermissions: 0o600]),
            let log = FileHandle(forWritingAtPath: logURL.path)
        else { throw CohortError(.system, "could not create the ssh log file", at: .init(file: logURL.path)) }
        var arguments = [
            "-F", "/dev/null", "-v", "-T", "-s", "-p", String(destination.port), "-l", destination.user,
            "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes", "-o", "UserKnownHostsFile=\(knownHosts)",
            "-o", "GlobalKnownHostsFile=/dev/null", "-o", "UpdateHostKeys=no", "-o", "CheckHostIP=no",
            "-o", "PasswordAuthentication=no", "-o", "KbdInteractiveAuthentication=no", "-o", "ConnectTimeout=\(connectTimeout)",
            "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4", "-o", "ForwardAgent=no", "-o", "ClearAllForwardings=yes",
        ]
        if let identity { arguments += ["-o", "IdentitiesOnly=yes", "-i", identity] }
        arguments += ["--", destination.host, "sftp"]
        let input = Pipe()
        let output = Pipe()
        process = Process()
        process.executableURL = URL(fileURLWithPath: ssh)
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = log
        do {
            try process.run()
        } catch {
            throw CohortError(.system, "could not start ssh", underlying: "\(error)")
        }
        try? log.close()
        toServer = dup(input.fileHandleForWriting.fileDescriptor)
        fromServer = dup(output.fileHandleForReading.fileDescriptor)
        try? input.fileHandleForWriting.close()
        try? output.fileHandleForReading.close()
        try? input.fileHandleForReading.close()
        try? output.fileHandleForWriting.close()
    }

    deinit {
        _ = try? finish()
        try? FileManager.default.removeItem(at: logURL)
    }

    /// Writes all of `bytes` to the server; a closed connection is a `.system` error the caller
    /// classifies with ``failure()``.
    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        try bytes.withUnsafeBytes { raw in
            while offset < raw.count {
                let count = Foundation.write(toServer, raw.baseAddress! + offset, raw.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw CohortError(.system, "the SFTP connection closed") }
                offset += count
            }
        }
    }

    /// Reads exactly `count` bytes from the server.
    func read(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var offset = 0
        try bytes.withUnsafeMutableBytes { raw in
            while offset < count {
                let got = Foundation.read(fromServer, raw.baseAddress! + offset, count - offset)
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { throw CohortError(.system, "the SFTP connection closed") }
                offset += got
            }
        }
        return bytes
    }

    /// Closes the connection and waits for ssh; returns its exit status.
    @discardableResult
    func finish() throws -> Int32 {
        guard !closed else { return process.isRunning ? -1 : process.terminationStatus }
        closed = true
        close(toServer)
        close(fromServer)
        process.waitUntilExit()
        return process.terminationStatus
    }

    /// Ends ssh at once (an error mid-transfer).
    func abort() {
        if process.isRunning { process.terminate() }
        _ = try? finish()
    }

    /// What ssh's log says went wrong; `.network` when it names nothing more precise.
    func failure() -> Failure {
        let text = log()
        if text.contains("REMOTE HOST IDENTIFICATION HAS CHANGED") || text.contains("Host key for") && text.contains("has changed") {
            return .changedHostKey
        }
        if text.contains("host key is known for") || text.contains("Host key verification failed") { return .unknownHostKey }
        if text.contains("Permission denied") || text.contains("Too many authentication failures") { return .authentication }
        return .network
    }

    /// The last lines of ssh's log that are not debug output (what ssh itself said went wrong).
    func reason() -> String {
        let lines = log().split(whereSeparator: \.isNewline).map(String.init)
            .filter { !$0.hasPrefix("debug") && !$0.hasPrefix("OpenSSH_") && !$0.hasPrefix("@") && !$0.isEmpty }
        return lines.suffix(2).joined(separator: "; ")
    }

    private func log() -> String {
        (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
    }

    /// `SHA256:…` from `debug1: Server host key: ssh-ed25519 SHA256:…`.
    static func fingerprint(inLog text: String) -> String? {
        for line in text.split(whereSeparator: \.isNewline) where line.contains("Server host key:") {
            if let word = line.split(separator: " ").first(where: { $0.hasPrefix("SHA256:") }) { return String(word) }
        }
        return nil
    }

    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}
