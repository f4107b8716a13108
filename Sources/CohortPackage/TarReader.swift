import CohortCore

/// A streaming reader of ustar/pax archives that checks their structure as it goes: header
/// checksums, magic, numeric fields, entry types, content lengths, and the two zero blocks at
/// the end (only zero bytes may follow them).
///
/// Call ``next()`` for each entry and ``read(into:)`` for its content (unread content is skipped
/// by the following ``next()``). Structure problems throw `.integrity` errors; errors from the
/// source propagate unchanged.
final class TarReader {
    /// One archive member.
    struct Entry {
        enum Kind {
            case file
            case directory
        }

        /// The member's path as stored (pax `path` when present), directories without trailing `/`.
        var path: String
        var kind: Kind
        var size: UInt64
    }

    private static let maximumPaxSize = 1 << 20

    private let source: (UnsafeMutableRawBufferPointer) throws -> Int
    private let buffer: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0
    private var sourceEnded = false
    /// Content bytes of the current entry not yet read, and the padding after them.
    private var remaining: UInt64 = 0
    private var padding = 0
    private var ended = false
    /// Bytes consumed, for error messages.
    private(set) var offset: UInt64 = 0

    init(source: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
        self.source = source
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    }

    deinit {
        buffer.deallocate()
    }

    /// The next entry, or nil after the end-of-archive marker (checked).
    func next() throws -> Entry? {
        guard !ended else { return nil }
        try skip(remaining + UInt64(padding))
        remaining = 0
        padding = 0
        var pax: [String: [UInt8]] = [:]
        while true {
            let headerOffset = offset
            guard let block = try readBlock() else {
                throw structure("archive ends without the two zero blocks that close a tar archive")
            }
            if block.allSatisfy({ $0 == 0 }) {
                try endOfArchive(at: headerOffset, pendingPax: !pax.isEmpty)
                return nil
            }
            try checkHeader(block, at: headerOffset)
            guard let size = TarHeader.octal(block, TarHeader.sizeField) else {
                throw structure("invalid size field at byte \(headerOffset)")
            }
            if block[TarHeader.typeflagOffset] == UInt8(ascii: "x") {
                pax.merge(try paxRecords(size: size, at: headerOffset)) { _, new in new }
                continue
            }
            let entry = try entry(block, size: size, pax: pax, at: headerOffset)
            remaining = entry.size
            padding = Self.padding(for: entry.size)
            return entry
        }
    }

    /// After a zero block: the second zero block and nothing but zeros after them.
    private func endOfArchive(at headerOffset: UInt64, pendingPax: Bool) throws {
        guard let second = try readBlock() else {
            throw structure("archive ends after a single zero block")
        }
        guard second.allSatisfy({ $0 == 0 }) else {
            throw structure("a lone zero block at byte \(headerOffset) is followed by more data")
        }
        guard !pendingPax else { throw structure("a pax header is not followed by an entry") }
        try checkTrailer()
        ended = true
    }

    /// The header's checksum and its ustar (POSIX or GNU) magic.
    private func checkHeader(_ block: [UInt8], at headerOffset: UInt64) throws {
        guard let stored = TarHeader.octal(block, TarHeader.checksumField), stored == TarHeader.checksum(block) else {
            throw structure("header checksum mismatch at byte \(headerOffset)")
        }
        let magic = Array(block[TarHeader.magicField])
        let version = Array(block[TarHeader.versionField])
        guard (magic == Array("ustar".utf8) + [0] && version == Array("00".utf8))
            || (magic == Array("ustar ".utf8) && version == [32, 0])
        else { throw structure("header at byte \(headerOffset) is not ustar") }
    }

    /// The records of a pax extended header of `size` bytes (bounded by ``maximumPaxSize``).
    private func paxRecords(size: UInt64, at headerOffset: UInt64) throws -> [String: [UInt8]] {
        guard size <= UInt64(Self.maximumPaxSize) else { throw structure("pax header too large at byte \(headerOffset)") }
        let bytes = try readExactly(Int(size))
        try skip(UInt64(Self.padding(for: size)))
        guard let records = TarHeader.parsePax(bytes) else {
            throw structure("malformed pax header at byte \(headerOffset)")
        }
        return records
    }

    /// The entry the header `block` describes (its path and size from the pax records when given).
    private func entry(_ block: [UInt8], size headerSize: UInt64, pax: [String: [UInt8]], at headerOffset: UInt64) throws -> Entry {
        let kind: Entry.Kind
        switch block[TarHeader.typeflagOffset] {
        case UInt8(ascii: "0"), 0: kind = .file
        case UInt8(ascii: "5"): kind = .directory
        default:
            throw structure("unsupported entry type at byte \(headerOffset) (only files and directories are expected)")
        }
        var nameBytes: [UInt8]
        if let path = pax["path"] {
            nameBytes = path
        } else {
            nameBytes = TarHeader.text(block, TarHeader.nameField)
            let prefix = TarHeader.text(block, TarHeader.prefixField)
            if !prefix.isEmpty { nameBytes = prefix + [UInt8(ascii: "/")] + nameBytes }
        }
        var size = headerSize
        if let paxSize = pax["size"] {
            guard let value = UInt64(String(decoding: paxSize, as: UTF8.self)) else {
                throw structure("invalid pax size at byte \(headerOffset)")
            }
            size = value
        }
        guard let path = String(validating: nameBytes, as: UTF8.self) else {
            throw structure("entry name at byte \(headerOffset) is not UTF-8")
        }
        var trimmed = Substring(path)
        while trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        return Entry(path: String(trimmed), kind: kind, size: kind == .directory ? 0 : size)
    }

    /// Reads the current entry's content; 0 at its end.
    func read(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        guard remaining > 0, target.count > 0 else { return 0 }
        try fill()
        guard end > start else { throw structure("archive ends inside an entry's content") }
        let count = Int(min(UInt64(min(end - start, target.count)), remaining))
        target.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[start..<(start + count)]))
        start += count
        offset += UInt64(count)
        remaining -= UInt64(count)
        return count
    }

    private static func padding(for size: UInt64) -> Int {
        let remainder = Int(size % 512)
        return remainder == 0 ? 0 : 512 - remainder
    }

    /// After the end marker only zero bytes (record padding) may follow.
    private func checkTrailer() throws {
        while true {
            try fill()
            if end == start { return }
            guard UnsafeRawBufferPointer(rebasing: buffer[start..<end]).allSatisfy({ $0 == 0 }) else {
                throw structure("data follows the end of the tar archive")
            }
            offset += UInt64(end - start)
            start = end
        }
    }

    /// Makes at least one byte available unless the source has ended.
    private func fill() throws {
        guard start == end, !sourceEnded else { return }
        start = 0
        end = 0
        let count = try source(buffer)
        if count == 0 { sourceEnded = true }
        end = count
    }

    private func readBlock() throws -> [UInt8]? {
        let block = try readExactly(512, allowEmpty: true)
        return block.isEmpty ? nil : block
    }

    private func readExactly(_ count: Int, allowEmpty: Bool = false) throws -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(count)
        while result.count < count {
            try fill()
            guard end > start else {
                if allowEmpty && result.isEmpty { return [] }
                throw structure("archive ends in the middle of a block")
            }
            let take = min(end - start, count - result.count)
            result.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[start..<(start + take)]))
            start += take
            offset += UInt64(take)
        }
        return result
    }

    private func skip(_ count: UInt64) throws {
        var left = count
        while left > 0 {
            try fill()
            guard end > start else { throw structure("archive ends inside an entry's content") }
            let take = Int(min(UInt64(end - start), left))
            start += take
            offset += UInt64(take)
            left -= UInt64(take)
        }
    }

    private func structure(_ message: String) -> CohortError {
        CohortError(.integrity, message)
    }
}
