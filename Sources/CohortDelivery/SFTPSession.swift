import CohortCore
import CohortCrypto
import Foundation

/// The SFTP protocol, version 3 (draft-ietf-secsh-filexfer-02, what OpenSSH's server speaks),
/// over an ``SSHConnection``: the few requests a delivery needs, with writes and reads
/// pipelined (up to ``window`` requests in flight) so a transfer is not one round trip per chunk.
final class SFTPSession {
    private enum Packet: UInt8 {
        case initialize = 1, version = 2, open = 3, close = 4, read = 5, write = 6, remove = 13, mkdir = 14, realpath = 16, stat = 17, rename = 18
        case status = 101, handle = 102, data = 103, name = 104, attrs = 105
    }

    private enum Status: UInt32 {
        case ok = 0, eof = 1, noSuchFile = 2, permissionDenied = 3, failure = 4
    }

    /// Bytes per WRITE or READ (the size every SFTP server accepts).
    static let chunk = 32 * 1024
    /// Requests in flight during a transfer.
    static let window = 64

    let connection: SSHConnection
    private var nextID: UInt32 = 1

    init(connection: SSHConnection) throws {
        self.connection = connection
        var packet = Writer(.initialize)
        packet.u32(3)
        try connection.write(packet.bytes(withID: nil))
        let (type, _) = try receive()
        guard type == Packet.version.rawValue else { throw protocolError("the server did not answer SFTP's version request") }
    }

    // MARK: Requests

    /// The absolute form of `path` on the server (`.` is the login's home directory).
    func realpath(_ path: String) throws -> String {
        var packet = Writer(.realpath)
        packet.string(path)
        var reply = try request(packet)
        guard reply.type == Packet.name.rawValue, try reply.reader.u32() >= 1 else { throw try statusError(reply, "resolve the home folder") }
        return String(decoding: try reply.reader.string(), as: UTF8.self)
    }

    /// The size of `path`, or nil when there is no such file.
    func size(_ path: String) throws -> UInt64? {
        var packet = Writer(.stat)
        packet.string(path)
        var reply = try request(packet)
        if reply.type == Packet.status.rawValue {
            let code = try reply.reader.u32()
            if code == Status.noSuchFile.rawValue { return nil }
            throw SFTPError(status: code, what: "look at \(path)")
        }
        guard reply.type == Packet.attrs.rawValue else { throw protocolError("unexpected answer to a stat request") }
        let flags = try reply.reader.u32()
        return flags & 1 != 0 ? try reply.reader.u64() : 0
    }

    /// Creates `path` and its missing parents.
    func makeDirectories(_ path: String) throws {
        var current = path.hasPrefix("/") ? "" : "."
        for part in path.split(separator: "/") {
            current += "/" + part
            if try size(current) != nil { continue }
            var packet = Writer(.mkdir)
            packet.string(current)
            packet.u32(0)
            try expectOK(try request(packet), "create the folder \(current)")
        }
    }

    func remove(_ path: String) throws {
        var packet = Writer(.remove)
        packet.string(path)
        try expectOK(try request(packet), "remove \(path)")
    }

    /// Renames `from` to `to`; fails when `to` exists (SFTP v3 semantics: nothing is replaced).
    func rename(_ from: String, to: String) throws {
        var packet = Writer(.rename)
        packet.string(from)
        packet.string(to)
        try expectOK(try request(packet), "rename into \(to)")
    }

    /// Writes the local file `local` from byte `offset` on into `remote` (created when missing,
    /// cut to `offset` otherwise), `progress` after each acknowledged chunk with the bytes written.
    func upload(local: String, remote: String, from offset: UInt64, progress: (UInt64) -> Void) throws {
        guard let file = FileHandle(forReadingAtPath: local) else { throw CohortError(.notFound, "cannot read the file to deliver", at: .init(file: local)) }
        defer { try? file.close() }
        try file.seek(toOffset: offset)
        let handle = try open(remote, flags: offset == 0 ? 0x02 | 0x08 | 0x10 : 0x02 | 0x08)
        var position = offset
        var inFlight: [UInt32: Int] = [:]
        var done = false
        var failure: (any Error)?
        while !done || !inFlight.isEmpty {
            while !done, inFlight.count < Self.window {
                guard let data = try file.read(upToCount: Self.chunk), !data.isEmpty else {
                    done = true
                    break
                }
                var packet = Writer(.write)
                packet.string(handle)
                packet.u64(position)
                packet.string([UInt8](data))
                inFlight[try send(packet)] = data.count
                position += UInt64(data.count)
            }
            if inFlight.isEmpty { break }
            var reply = try receive()
            guard let id = try? reply.reader.u32(), let sent = inFlight.removeValue(forKey: id) else { throw protocolError("an answer to no request") }
            if reply.type != Packet.status.rawValue || (try? reply.reader.u32()) != Status.ok.rawValue {
                failure = failure ?? SFTPError(status: Status.failure.rawValue, what: "write \(remote)")
                done = true
            } else {
                progress(UInt64(sent))
            }
        }
        try close(handle)
        if let failure { throw failure }
    }

    /// SHA-256 and size of the first `length` bytes of `remote` (all of it when nil), read back
    /// from the server.
    func sha256(of remote: String, length: UInt64? = nil, progress: (UInt64) -> Void = { _ in }) throws -> (sha256: String, size: UInt64) {
        guard let total = try length ?? size(remote) else { throw SFTPError(status: Status.noSuchFile.rawValue, what: "read back \(remote)") }
        let handle = try open(remote, flags: 0x01)
        let hasher = SHA256Hasher()
        var requested: UInt64 = 0
        var hashed: UInt64 = 0
        var pending: [UInt32: (offset: UInt64, length: Int)] = [:]
        var arrived: [UInt64: [UInt8]] = [:]
        var retry: [(offset: UInt64, length: Int)] = []
        var ended = false
        while hashed < total, !ended {
            while pending.count < Self.window, !retry.isEmpty || requested < total {
                let piece = retry.isEmpty ? (requested, Int(min(UInt64(Self.chunk), total - requested))) : retry.removeFirst()
                if retry.isEmpty, piece.0 == requested { requested += UInt64(piece.1) }
                var packet = Writer(.read)
                packet.string(handle)
                packet.u64(piece.0)
                packet.u32(UInt32(piece.1))
                pending[try send(packet)] = (piece.0, piece.1)
            }
            var reply = try receive()
            guard let id = try? reply.reader.u32(), let asked = pending.removeValue(forKey: id) else { throw protocolError("an answer to no request") }
            if reply.type == Packet.data.rawValue {
                let data = try reply.reader.string()
                if data.count < asked.length, !data.isEmpty {
                    retry.append((asked.offset + UInt64(data.count), asked.length - data.count))
                }
                if !data.isEmpty { arrived[asked.offset] = data }
                if data.isEmpty { ended = true }
            } else {
                // End of file before `total`: the file is shorter than asked for.
                ended = true
            }
            while let next = arrived.removeValue(forKey: hashed) {
                hasher.update(next)
                hashed += UInt64(next.count)
                progress(UInt64(next.count))
            }
        }
        while !pending.isEmpty {
            var reply = try receive()
            if let id = try? reply.reader.u32() { pending.removeValue(forKey: id) }
        }
        try close(handle)
        return (Hex.encode(hasher.finalize()), hashed)
    }

    // MARK: Plumbing

    private func open(_ path: String, flags: UInt32) throws -> [UInt8] {
        var packet = Writer(.open)
        packet.string(path)
        packet.u32(flags)
        packet.u32(flags & 0x08 != 0 ? 4 : 0)
        if flags & 0x08 != 0 { packet.u32(0o600) }
        var reply = try request(packet)
        guard reply.type == Packet.handle.rawValue else { throw try statusError(reply, "open \(path)") }
        return try reply.reader.string()
    }

    private func close(_ handle: [UInt8]) throws {
        var packet = Writer(.close)
        packet.string(handle)
        try expectOK(try request(packet), "close a file")
    }

    private func send(_ packet: Writer) throws -> UInt32 {
        let id = nextID
        nextID &+= 1
        try connection.write(packet.bytes(withID: id))
        return id
    }

    private func request(_ packet: Writer) throws -> (type: UInt8, reader: Reader) {
        let id = try send(packet)
        var reply = try receive()
        guard try reply.reader.u32() == id else { throw protocolError("an answer out of order") }
        return reply
    }

    private func receive() throws -> (type: UInt8, reader: Reader) {
        var header = Reader(try connection.read(4))
        let length = Int(try header.u32())
        guard length >= 1, length <= 1 << 20 else { throw protocolError("an SFTP packet of impossible length") }
        let body = try connection.read(length)
        return (body[0], Reader(Array(body.dropFirst())))
    }

    private func expectOK(_ reply: (type: UInt8, reader: Reader), _ what: String) throws {
        var reply = reply
        guard reply.type == Packet.status.rawValue else { throw protocolError("unexpected answer while trying to \(what)") }
        let code = try reply.reader.u32()
        guard code == Status.ok.rawValue else { throw SFTPError(status: code, what: what) }
    }

    private func statusError(_ reply: (type: UInt8, reader: Reader), _ what: String) throws -> any Error {
        var reply = reply
        guard reply.type == Packet.status.rawValue else { return protocolError("unexpected answer while trying to \(what)") }
        return SFTPError(status: try reply.reader.u32(), what: what)
    }

    private func protocolError(_ message: String) -> CohortError {
        CohortError(.system, "SFTP: \(message)", hint: "check that the server offers the sftp subsystem")
    }

    private struct Writer {
        var body: [UInt8] = []
        let type: Packet

        init(_ type: Packet) { self.type = type }

        mutating func u32(_ value: UInt32) { body += withUnsafeBytes(of: value.bigEndian, Array.init) }
        mutating func u64(_ value: UInt64) { body += withUnsafeBytes(of: value.bigEndian, Array.init) }
        mutating func string(_ text: String) { string(Array(text.utf8)) }
        mutating func string(_ bytes: [UInt8]) {
            u32(UInt32(bytes.count))
            body += bytes
        }

        func bytes(withID id: UInt32?) -> [UInt8] {
            var payload: [UInt8] = [type.rawValue]
            if let id { payload += withUnsafeBytes(of: id.bigEndian, Array.init) }
            payload += body
            return withUnsafeBytes(of: UInt32(payload.count).bigEndian, Array.init) + payload
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func u32() throws -> UInt32 {
            guard offset + 4 <= bytes.count else { throw CohortError(.system, "SFTP: a packet ended early") }
            defer { offset += 4 }
            return bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func u64() throws -> UInt64 {
            UInt64(try u32()) << 32 | UInt64(try u32())
        }

        mutating func string() throws -> [UInt8] {
            let count = Int(try u32())
            guard offset + count <= bytes.count else { throw CohortError(.system, "SFTP: a packet ended early") }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }
    }
}

/// A request the server refused, by its SFTP status code (never the server's free-text message).
struct SFTPError: Error, CustomStringConvertible {
    let status: UInt32
    let what: String

    var description: String {
        let meaning = switch status {
        case 2: "no such file or folder"
        case 3: "permission denied"
        case 1: "unexpected end of file"
        default: "the server refused (SFTP status \(status))"
        }
        return "could not \(what): \(meaning)"
    }
}
