import CohortTestSupport
import Foundation
import Testing

/// A real OpenSSH server (Debian's `openssh-server`) on a loopback port, started in a temporary
/// folder with a throwaway ed25519 host key, a user key and its own configuration, and stopped
/// when the test ends. Its sftp subsystem is a small wrapper around Debian's `sftp-server` that
/// can, once, cut a session after some bytes (an interrupted upload) or alter the uploaded
/// partial files when a session ends (a tampered upload) — the two faults the delivery tests
/// need from a server, made where a hostile network or server would make them.
final class ScratchSSHServer {
    static let sshd = "/usr/sbin/sshd"
    static let sftpServer = ["/usr/lib/openssh/sftp-server", "/usr/lib/sftp-server"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Whether the sshd tests run: always in CI (where a missing sshd fails them); elsewhere only
    /// when `openssh-server` is installed (skipped visibly otherwise).
    static var availableOrCI: Bool {
        ProcessInfo.processInfo.environment["CI"] != nil || (FileManager.default.isExecutableFile(atPath: sshd) && sftpServer != nil)
    }

    static let reason: Comment = "needs openssh-server (sshd, sftp-server): apt-get install openssh-server"

    let folder: URL
    let port: Int
    let user: String
    /// The user's private key (`--identity`).
    let identity: String
    /// A known-hosts file pinning this server's host key.
    let knownHosts: String
    /// The host key's fingerprint as OpenSSH prints it (`SHA256:…`), from `ssh-keygen -lf`.
    let hostKeyFingerprint: String
    /// The folder the tests deliver into.
    var inbox: String { folder.appendingPathComponent("portal").path }
    private let pidFile: String

    /// `hostKey` and `userKey`: `ed25519`, `ecdsa` or `rsa` (OpenSSH formats from ssh-keygen).
    init(hostKey: String = "ed25519", userKey: String = "ed25519") throws {
        let sshd = try #require(FileManager.default.isExecutableFile(atPath: Self.sshd) ? Self.sshd : nil, "sshd is not installed (apt-get install openssh-server)")
        let sftpServer = try #require(Self.sftpServer, "sftp-server is not installed (apt-get install openssh-sftp-server)")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-sshd-\(UUID().uuidString.prefix(8))", isDirectory: true)
        folder = root
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder.appendingPathComponent("portal").path, withIntermediateDirectories: true)
        if getuid() == 0 { try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true) }
        func path(_ name: String) -> String { root.appendingPathComponent(name).path }
        for (key, type) in [("host_ed25519", hostKey), ("user_ed25519", userKey)] {
            let size = type == "rsa" ? ["-b", "3072"] : type == "ecdsa" ? ["-b", "256"] : []
            let (status, output) = try CLI.tool("/usr/bin/ssh-keygen", ["-q", "-t", type] + size + ["-N", "", "-C", "cohort-test", "-f", path(key)])
            try #require(status == 0, "ssh-keygen: \(output)")
        }
        try FileManager.default.copyItem(atPath: path("user_ed25519.pub"), toPath: path("authorized_keys"))
        user = String(cString: getpwuid(getuid()).pointee.pw_name)
        identity = path("user_ed25519")
        let wrapper = """
            #!/bin/sh
            # Test sftp subsystem: Debian's sftp-server, with faults armed by marker files.
            dir=\(root.path)
            if [ -f "$dir/cut-after" ]; then
              limit=$(cat "$dir/cut-after"); rm -f "$dir/cut-after"
              exec python3 -c 'import os,subprocess,sys
            limit=int(sys.argv[1]); p=subprocess.Popen([sys.argv[2]],stdin=subprocess.PIPE)
            n=0
            while n<limit:
                b=os.read(0,min(65536,limit-n))
                if not b: break
                p.stdin.write(b); p.stdin.flush(); n+=len(b)
            os._exit(1)' "$limit" \(sftpServer)
            fi
            \(sftpServer) "$@"
            if [ -f "$dir/tamper" ]; then
              rm -f "$dir/tamper"
              for f in "$dir"/portal/.*.cohort-partial "$dir"/portal/*/.*.cohort-partial; do [ -f "$f" ] && printf 'X' | dd of="$f" bs=1 seek=20 conv=notrunc 2>/dev/null; done
            fi
            exit 0
            """
        try wrapper.write(toFile: path("sftp-wrapper"), atomically: true, encoding: .utf8)
        chmod(path("sftp-wrapper"), 0o755)
        port = ScratchCluster.freePort()
        let config = """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(path("host_ed25519"))
            PidFile \(path("sshd.pid"))
            AuthorizedKeysFile \(path("authorized_keys"))
            StrictModes no
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            UsePAM no
            PermitRootLogin prohibit-password
            Subsystem sftp \(path("sftp-wrapper"))
            """
        try config.write(toFile: path("sshd_config"), atomically: true, encoding: .utf8)
        let hostKey = try String(contentsOfFile: path("host_ed25519.pub"), encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        knownHosts = path("known_hosts")
        try "[127.0.0.1]:\(port) \(hostKey)\n".write(toFile: knownHosts, atomically: true, encoding: .utf8)
        let (status, listing) = try CLI.tool("/usr/bin/ssh-keygen", ["-l", "-E", "sha256", "-f", path("host_ed25519.pub")])
        try #require(status == 0, "ssh-keygen -l: \(listing)")
        hostKeyFingerprint = String(try #require(listing.split(separator: " ").first { $0.hasPrefix("SHA256:") }))
        // sshd daemonizes (its standard streams go to /dev/null, its log to sshd.log) and
        // writes its pid file; no long-lived child of the test process is left to reap.
        pidFile = path("sshd.pid")
        let (started, output) = try CLI.tool(sshd, ["-f", path("sshd_config"), "-E", path("sshd.log")])
        try #require(started == 0, "sshd did not start: \(output)")
        // Listening once the port accepts a connection.
        for _ in 0..<100 {
            if Self.accepts(port: port) { return }
            usleep(50_000)
        }
        stop()
        Issue.record("sshd did not start listening on 127.0.0.1:\(port)")
        throw CocoaError(.fileReadUnknown)
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Stops the listener (sessions end with it).
    func stop() {
        guard let text = try? String(contentsOfFile: pidFile, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return }
        kill(pid, SIGTERM)
        for _ in 0..<50 where kill(pid, 0) == 0 { usleep(20_000) }
    }

    /// The next sftp session is cut after `bytes` bytes from the client.
    func cutNextSession(after bytes: Int) throws {
        try String(bytes).write(toFile: folder.appendingPathComponent("cut-after").path, atomically: true, encoding: .utf8)
    }

    /// When the next sftp session ends, one byte of every partial upload is changed.
    func tamperAfterNextSession() throws {
        try "".write(toFile: folder.appendingPathComponent("tamper").path, atomically: true, encoding: .utf8)
    }

    /// `sftp://user@127.0.0.1:port/…/portal`.
    var url: String { "sftp://\(user)@127.0.0.1:\(port)\(inbox)" }

    /// The files in the portal folder, hidden ones included.
    func portalFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: inbox).sorted() }

    static func accepts(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}

/// A throwaway certificate authority made with the `openssl` command: recipient certificates
/// for RSA and EC keys, and the ones cohort must refuse (expired, not yet valid, signing-only).
struct ScratchCA {
    let folder: URL

    init(in folder: URL) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("newcerts"), withIntermediateDirectories: true)
        try "".write(to: folder.appendingPathComponent("index.txt"), atomically: true, encoding: .utf8)
        try "1000\n".write(to: folder.appendingPathComponent("serial"), atomically: true, encoding: .utf8)
        let config = """
            [ ca ]
            default_ca = test_ca
            [ test_ca ]
            dir = \(folder.path)
            database = $dir/index.txt
            new_certs_dir = $dir/newcerts
            serial = $dir/serial
            default_md = sha256
            policy = any_name
            unique_subject = no
            [ any_name ]
            commonName = supplied
            [ rsa_encryption ]
            keyUsage = critical, keyEncipherment
            [ ec_encryption ]
            keyUsage = critical, keyAgreement
            [ signing_only ]
            keyUsage = critical, digitalSignature
            """
        try config.write(to: folder.appendingPathComponent("ca.cnf"), atomically: true, encoding: .utf8)
        try openssl(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("ca-key.pem"), "-out", path("ca.pem"), "-days", "30", "-subj", "/CN=Test Research CA"])
    }

    func path(_ name: String) -> String { folder.appendingPathComponent(name).path }

    /// Issues `name-cert.pem` / `name-key.pem` for `commonName`: `kind` rsa or ec, `extensions` a
    /// section of the CA configuration, validity from `start` to `end` (openssl's YYYYMMDDHHMMSSZ).
    @discardableResult
    func issue(_ name: String, commonName: String, kind: String = "rsa", extensions: String? = nil, start: String? = nil, end: String? = nil) throws -> (cert: String, key: String) {
        let key = path("\(name)-key.pem"), cert = path("\(name)-cert.pem"), request = path("\(name).csr")
        let keyOptions = kind == "rsa" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        try openssl(["req", "-new"] + keyOptions + ["-nodes", "-keyout", key, "-out", request, "-subj", "/CN=\(commonName)"])
        var arguments = ["ca", "-batch", "-notext", "-config", path("ca.cnf"), "-cert", path("ca.pem"), "-keyfile", path("ca-key.pem"), "-in", request, "-out", cert]
        arguments += ["-extensions", extensions ?? (kind == "rsa" ? "rsa_encryption" : "ec_encryption")]
        arguments += ["-startdate", start ?? "20250101000000Z", "-enddate", end ?? "20391231000000Z"]
        try openssl(arguments)
        return (cert, key)
    }

    @discardableResult
    func openssl(_ arguments: [String]) throws -> String {
        let (status, output) = try CLI.tool("/usr/bin/openssl", arguments)
        try #require(status == 0, "openssl \(arguments.prefix(2).joined(separator: " ")): \(output)")
        return output
    }
}
