import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a program to its end with `posix_spawn` and `waitpid`, both output pipes drained
/// together with `poll`.
///
/// Foundation's `Process` reaps its children from a monitoring thread; under the test runner's
/// parallel suites a child that had exited was seen left a zombie while `waitUntilExit` waited
/// for ever. Here the caller's thread spawns, drains and reaps its own child, so nothing else
/// is involved: a child that exits is collected.
public enum ChildProcess {
    /// What the child wrote and how it ended.
    public struct Outcome: Sendable {
        /// The exit status, or the signal's number when a signal ended it (as Foundation's
        /// `Process.terminationStatus` gives it).
        public var status: Int32
        public var stdout: [UInt8]
        public var stderr: [UInt8]
    }

    /// Runs `executable` with `arguments` (without argv[0]) in `directory` with `environment`
    /// (the caller's when nil), writes `stdin` to its standard input and closes it; with
    /// `outputFile` its standard output goes to that existing file instead (as `> file`, the
    /// file's mode kept), and ``Outcome/stdout`` is empty; with `mergingErrors` its standard
    /// error goes wherever its output goes (as `2>&1`).
    ///
    /// - Throws: `POSIXError` when the program cannot be started.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil, stdin: [UInt8] = [],
        mergingErrors: Bool = false, outputFile: String? = nil
    ) throws -> Outcome {
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        guard pipe(&input) == 0, pipe(&output) == 0, pipe(&errors) == 0 else { throw POSIXError(.EMFILE) }
        for fd in [input[1], output[0], errors[0]] { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        if let outputFile {
            posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_TRUNC, 0)
        } else {
            posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        }
        // After descriptor 1 is set, so errors follow the output to the pipe or to the file.
        posix_spawn_file_actions_adddup2(&actions, mergingErrors ? 1 : errors[1], 2)
        for fd in [input[0], output[1], errors[1]] { posix_spawn_file_actions_addclose(&actions, fd) }
        if let directory {
            guard let addChdir = Self.addChdir, addChdir(&actions, directory) == 0 else { throw POSIXError(.ENOSYS) }
        }

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in env { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, env)
        for fd in [input[0], output[1], errors[1]] { close(fd) }
        guard spawned == 0 else {
            for fd in [input[1], output[0], errors[0]] { close(fd) }
            throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .ENOENT)
        }

        feed(input[1], stdin)
        let collected = drain([output[0], errors[0]])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw POSIXError(.ECHILD) }
        }
        let exited = status & 0x7f == 0
        return Outcome(status: exited ? (status >> 8) & 0xff : status & 0x7f, stdout: collected[0], stderr: collected[1])
    }

    /// Writes `bytes` whole to the child's standard input and closes it (a child that closes it
    /// early is its business: SIGPIPE is ignored in the test process, the write fails with EPIPE).
    private static func feed(_ descriptor: Int32, _ bytes: [UInt8]) {
        _ = ignoreBrokenPipes
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
        }
        close(descriptor)
    }

    /// Reads every descriptor to its end together (a full pipe never blocks the child), closing each.
    private static func drain(_ descriptors: [Int32]) -> [[UInt8]] {
        var collected = [[UInt8]](repeating: [], count: descriptors.count)
        var open = descriptors
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while open.contains(where: { $0 >= 0 }) {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if poll(&fds, nfds_t(fds.count), -1) < 0 {
                if errno == EINTR { continue }
                break
            }
            for (index, fd) in fds.enumerated() where fd.fd >= 0 && fd.revents != 0 {
                let n = chunk.withUnsafeMutableBytes { read(fd.fd, $0.baseAddress, $0.count) }
                if n > 0 {
                    collected[index] += chunk[0..<n]
                } else if n == 0 || errno != EINTR {
                    close(fd.fd)
                    open[index] = -1
                }
            }
        }
        return collected
    }

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29+), which the Glibc module does not
    /// declare.
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let addChdir: AddChdir? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "posix_spawn_file_actions_addchdir_np") else { return nil }
        return unsafeBitCast(symbol, to: AddChdir.self)
    }()

    /// Set once for the test process (a per-call swap would race with parallel tests).
    private static let ignoreBrokenPipes: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()
}
