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
        // Every end close-on-exec from its creation: a program another test thread spawns in
        // the meantime (a PostgreSQL server that stays up) must not inherit this child's pipes,
        // or they never reach end-of-file. The child gets its ends as 0, 1 and 2 by dup2, which
        // clears the flag on the copy.
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        guard makePipe(&input), makePipe(&output), makePipe(&errors) else {
            for fd in input + output + errors where fd >= 0 { close(fd) }
            throw POSIXError(.EMFILE)
        }

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
        // Nor does the child inherit anything else open in this process (another test's pipes,
        // which other code may not have made close-on-exec): descriptors from 3 up are closed.
        if let addCloseFrom = Self.addCloseFrom { _ = addCloseFrom(&actions, 3) }
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
        var status: Int32 = 0
        let collected = drain([output[0], errors[0]], child: pid, status: &status)
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

    /// Reads every descriptor to its end together (a full pipe never blocks the child), closing
    /// each, and reaps `child` into `status`. Should a descriptor stay open after the child has
    /// exited (a process it left running, or one that inherited the pipe elsewhere, still holds
    /// the other end), what is already in the pipe is read and the wait ends there instead of
    /// lasting for ever.
    private static func drain(_ descriptors: [Int32], child: pid_t, status: inout Int32) -> [[UInt8]] {
        var collected = [[UInt8]](repeating: [], count: descriptors.count)
        var open = descriptors
        var reaped = false
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while open.contains(where: { $0 >= 0 }) {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&fds, nfds_t(fds.count), reaped ? 0 : 500)
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 {
                if reaped { break }  // exited, and nothing more is in the pipes
                reaped = waitpid(child, &status, WNOHANG) == child
                continue
            }
            for (index, fd) in fds.enumerated() where fd.fd >= 0 && fd.revents != 0 {
                if !readChunk(fd.fd, using: &chunk, into: &collected[index]) {
                    close(fd.fd)
                    open[index] = -1
                }
            }
        }
        for fd in open where fd >= 0 { close(fd) }
        while !reaped, waitpid(child, &status, 0) != child, errno == EINTR {}
        return collected
    }

    /// Reads what one descriptor has into `bytes` through `chunk` (one buffer for the whole
    /// drain); false at its end (or on an error).
    private static func readChunk(_ descriptor: Int32, using chunk: inout [UInt8], into bytes: inout [UInt8]) -> Bool {
        let n = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if n > 0 {
            bytes += chunk[0..<n]
            return true
        }
        return n < 0 && errno == EINTR
    }

    /// A pipe whose two ends are close-on-exec from the start: glibc's `pipe2(O_CLOEXEC)`
    /// (atomic, which the Glibc module does not declare), else `pipe` and `fcntl`.
    private static func makePipe(_ fds: inout [Int32]) -> Bool {
        if let pipe2 = Self.pipe2 { return fds.withUnsafeMutableBufferPointer { pipe2($0.baseAddress!, O_CLOEXEC) } == 0 }
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private static let pipe2: Pipe2? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "pipe2") else { return nil }
        return unsafeBitCast(symbol, to: Pipe2.self)
    }()

    /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29+), which the Glibc module does not
    /// declare.
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32
    private static let addChdir: AddChdir? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "posix_spawn_file_actions_addchdir_np") else { return nil }
        return unsafeBitCast(symbol, to: AddChdir.self)
    }()

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which the Glibc module does
    /// not declare.
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let addCloseFrom: AddCloseFrom? = {
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: AddCloseFrom.self)
    }()

    /// Set once for the test process (a per-call swap would race with parallel tests).
    private static let ignoreBrokenPipes: Bool = {
        signal(SIGPIPE, SIG_IGN)
        return true
    }()
}
