import CohortCore
public import Foundation

/// A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` and `pg_ctl` from the
/// server's binaries, in a new temporary directory, listening only on a unix socket in that
/// directory (no TCP, no root service). ``stop()`` (also run by `deinit`) stops the server and
/// deletes the directory.
///
/// Run as root, the server programs run as the `postgres` user (`runuser -u postgres --`), which
/// PostgreSQL requires, and the directory is made theirs.
public final class ScratchCluster {
    /// Where Debian's PostgreSQL 15 server programs are.
    public static let defaultBinDirectory = "/usr/lib/postgresql/15/bin"

    /// The cluster's directory (data directory, socket and log inside).
    public let directory: URL
    /// The port that names the socket (`.s.PGSQL.<port>`).
    public let port: Int
    /// The superuser the cluster was made with.
    public let user = "postgres"
    private let bin: String
    private let asPostgres: Bool
    private var running = false

    /// A libpq URL for `database` (`postgresql://postgres@/db?host=%2Ftmp%2F…&port=…`).
    public func url(database: String = "postgres") -> String {
        let host = directory.path.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? directory.path
        return "postgresql://\(user)@/\(database)?host=\(host)&port=\(port)"
    }

    /// Why a cluster cannot be started here, or nil when the programs are present.
    public static func unavailableReason(binDirectory: String = defaultBinDirectory) -> String? {
        for tool in ["initdb", "pg_ctl"] where !FileManager.default.isExecutableFile(atPath: "\(binDirectory)/\(tool)") {
            return "\(binDirectory)/\(tool) not found (install Debian's postgresql package)"
        }
        if getuid() == 0, !FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") && !FileManager.default.isExecutableFile(atPath: "/sbin/runuser") {
            return "running as root, and runuser (util-linux) is missing"
        }
        return nil
    }

    /// Creates and starts a cluster. Throws, naming the step, when that is impossible.
    public init(binDirectory: String = defaultBinDirectory) throws {
        if let reason = Self.unavailableReason(binDirectory: binDirectory) {
            throw CohortError(.notFound, "cannot start a throwaway PostgreSQL cluster: \(reason)")
        }
        bin = binDirectory
        asPostgres = getuid() == 0
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("cohort-pg-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if asPostgres {
            try FileManager.default.setAttributes([.ownerAccountName: "postgres", .groupOwnerAccountName: "postgres"], ofItemAtPath: directory.path)
        }
        port = Self.freePort()
        do {
            try run("initdb", ["-D", data, "-U", user, "-A", "trust", "-E", "UTF8", "--no-sync", "--locale=C"])
            let options = "-k \(directory.path) -p \(port) -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
            try run("pg_ctl", ["-D", data, "-o", options, "-l", directory.appendingPathComponent("server.log").path, "-w", "-t", "60", "start"])
            running = true
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
    }

    deinit { stop() }

    private var data: String { directory.appendingPathComponent("data").path }

    /// Stops the server (immediate shutdown: the data is thrown away) and deletes the directory.
    public func stop() {
        if running {
            try? run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
            running = false
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Runs a server program and waits for it, its output and errors in a file in the cluster
    /// directory, started in that directory (the programs refuse to run from one the postgres
    /// user cannot read).
    ///
    /// Through ``ChildProcess`` (posix_spawn + waitpid) rather than Foundation's Process:
    /// `pg_ctl start` leaves a server running that inherits the descriptors, and Process did not
    /// reap `runuser` reliably then. The output goes to the file, so no pipe stays open in the
    /// server.
    private func run(_ tool: String, _ arguments: [String]) throws {
        let program = "\(bin)/\(tool)"
        let runuser = FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser") ? "/usr/sbin/runuser" : "/sbin/runuser"
        let command = asPostgres ? [runuser, "-u", "postgres", "--", program] + arguments : [program] + arguments
        let outputPath = directory.appendingPathComponent("\(tool).out").path
        guard FileManager.default.createFile(atPath: outputPath, contents: nil, attributes: [.posixPermissions: 0o644]) else {
            throw CohortError(.system, "cannot create the output file of \(tool)", at: .init(file: outputPath))
        }
        let outcome: ChildProcess.Outcome
        do {
            outcome = try ChildProcess.run(
                command[0], Array(command.dropFirst()), directory: directory.path, mergingErrors: true, outputFile: outputPath)
        } catch {
            throw CohortError(.system, "cannot run \(tool)", underlying: "\(error)")
        }
        guard outcome.status == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let last = text.split(separator: "\n").suffix(3).joined(separator: " / ")
            throw CohortError(.system, "\(tool) failed with status \(outcome.status)", underlying: last)
        }
    }

    /// A loopback port no local TCP listener uses (the cluster's socket is a file in the private
    /// directory, so for it the number only needs to be plausible; the test sshd listens on it).
    public static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return 54_321 }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : 54_321
    }
}
