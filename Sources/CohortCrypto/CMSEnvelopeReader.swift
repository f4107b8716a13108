import COpenSSL
import CohortCore
import Foundation

/// Splits a CMS (Auth)EnvelopedData file into its small structure and its encrypted content,
/// without reading the content into memory: the structure is re-encoded (definite lengths)
/// with the content left out — detached, as RFC 5652 allows — and the content's byte ranges in
/// the file are kept, to be streamed through ``ContentSource`` into `CMS_decrypt`.
///
/// The outer layers are walked as BER (indefinite lengths, constructed OCTET STRING chunks, as
/// streaming writers such as `openssl cms -stream` and cohort itself produce); every other
/// element is copied byte for byte for OpenSSL to parse.
struct CMSEnvelopeReader {
    /// The DER of the envelope without its encrypted content.
    let structure: [UInt8]
    /// The encrypted content's pieces: (offset in the file, length), in order.
    let pieces: [(offset: UInt64, length: Int)]

    private struct Header {
        var tag: UInt8
        var headerLength: Int
        /// nil: indefinite length (ends with 00 00).
        var length: Int?
        var constructed: Bool { tag & 0x20 != 0 }
    }

    private let fd: Int32
    private let size: UInt64

    init(descriptor fd: Int32, size: UInt64) throws {
        self.fd = fd
        self.size = size
        var pieces: [(UInt64, Int)] = []
        let contentInfo = try Self.header(fd, size, at: 0)
        guard contentInfo.tag == 0x30 else { throw Self.malformed("it does not start with a SEQUENCE") }
        var position = UInt64(contentInfo.headerLength)
        let typeEnd = try Self.end(fd, size, at: position)
        let contentType = try Self.bytes(fd, at: position, count: Int(typeEnd - position))
        position = typeEnd
        let explicit = try Self.header(fd, size, at: position)
        guard explicit.tag == 0xA0 else { throw Self.malformed("no [0] content") }
        position += UInt64(explicit.headerLength)
        let envelope = try Self.header(fd, size, at: position)
        guard envelope.tag == 0x30 else { throw Self.malformed("the content is not a SEQUENCE") }
        position += UInt64(envelope.headerLength)
        let envelopeEnd = envelope.length.map { position + UInt64($0) }
        var children: [UInt8] = []
        var sawContentInfo = false
        while true {
            if let envelopeEnd, position >= envelopeEnd { break }
            let child = try Self.header(fd, size, at: position)
            if child.tag == 0, child.length == 0 { break }
            let childEnd = try Self.end(fd, size, at: position)
            if child.tag == 0x30, !sawContentInfo {
                // EncryptedContentInfo: contentType, contentEncryptionAlgorithm, [0] content.
                sawContentInfo = true
                var inner = position + UInt64(child.headerLength)
                var kept: [UInt8] = []
                for _ in 0..<2 {
                    let elementEnd = try Self.end(fd, size, at: inner)
                    kept += try Self.bytes(fd, at: inner, count: Int(elementEnd - inner))
                    inner = elementEnd
                }
                let content = try Self.header(fd, size, at: inner)
                if content.tag == 0x80 || content.tag == 0xA0 {
                    try Self.collect(fd, size, at: inner, into: &pieces)
                }
                children += Self.element(0x30, kept)
            } else {
                children += try Self.bytes(fd, at: position, count: Int(childEnd - position))
            }
            position = childEnd
        }
        guard sawContentInfo else { throw Self.malformed("no encrypted content information") }
        structure = Self.element(0x30, contentType + Self.element(0xA0, Self.element(0x30, children)))
        self.pieces = pieces.map { (offset: $0.0, length: $0.1) }
    }

    private static func malformed(_ why: String) -> CohortError {
        CohortError(.integrity, "file is not a CMS envelope cohort can read: \(why)", hint: "give the .p7m file cohort export wrote")
    }

    /// The content octets of the element at `offset` (primitive, or constructed of chunks).
    private static func collect(_ fd: Int32, _ size: UInt64, at offset: UInt64, into pieces: inout [(UInt64, Int)]) throws {
        let h = try header(fd, size, at: offset)
        var position = offset + UInt64(h.headerLength)
        guard h.constructed else {
            guard let length = h.length else { throw malformed("a primitive element of indefinite length") }
            if length > 0 { pieces.append((position, length)) }
            return
        }
        let stop = h.length.map { position + UInt64($0) }
        while true {
            if let stop, position >= stop { break }
            let child = try header(fd, size, at: position)
            if child.tag == 0, child.length == 0 { break }
            try collect(fd, size, at: position, into: &pieces)
            position = try end(fd, size, at: position)
        }
    }

    /// The offset just past the element at `offset` (walking nested indefinite lengths).
    private static func end(_ fd: Int32, _ size: UInt64, at offset: UInt64, depth: Int = 0) throws -> UInt64 {
        guard depth < 64 else { throw malformed("nested too deeply") }
        let h = try header(fd, size, at: offset)
        var position = offset + UInt64(h.headerLength)
        if let length = h.length {
            let end = position + UInt64(length)
            guard end <= size else { throw malformed("an element runs past the end of the file") }
            return end
        }
        guard h.constructed else { throw malformed("a primitive element of indefinite length") }
        while true {
            let child = try header(fd, size, at: position)
            if child.tag == 0, child.length == 0 { return position + 2 }
            position = try end(fd, size, at: position, depth: depth + 1)
        }
    }

    private static func header(_ fd: Int32, _ size: UInt64, at offset: UInt64) throws -> Header {
        let available = Int(min(6, size > offset ? size - offset : 0))
        guard available >= 2 else { throw malformed("the file ends inside an element") }
        let b = try bytes(fd, at: offset, count: available)
        guard b[0] & 0x1F != 0x1F else { throw malformed("a multi-byte tag") }
        if b[1] < 0x80 { return Header(tag: b[0], headerLength: 2, length: Int(b[1])) }
        if b[1] == 0x80 { return Header(tag: b[0], headerLength: 2, length: nil) }
        let count = Int(b[1] & 0x7F)
        guard count <= 4, available >= 2 + count else { throw malformed("a length of more than four bytes") }
        let length = b[2..<2 + count].reduce(0) { $0 << 8 | Int($1) }
        return Header(tag: b[0], headerLength: 2 + count, length: length)
    }

    private static func bytes(_ fd: Int32, at offset: UInt64, count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done)) }
            guard got > 0 else { throw malformed("the file could not be read") }
            done += got
        }
        return buffer
    }

    /// A DER element: `tag`, definite length, `content`.
    private static func element(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        if content.count < 0x80 {
            length = [UInt8(content.count)]
        } else {
            var n = content.count
            var digits: [UInt8] = []
            while n > 0 {
                digits.insert(UInt8(n & 0xFF), at: 0)
                n >>= 8
            }
            length = [0x80 | UInt8(digits.count)] + digits
        }
        return [tag] + length + content
    }
}

/// A read-only OpenSSL BIO over the encrypted content's pieces of a file, read with `pread` in
/// order: what `CMS_decrypt` takes as the detached content.
final class ContentSource {
    private let fd: Int32
    private let pieces: [(offset: UInt64, length: Int)]
    private var index = 0
    private var consumed = 0
    let bio: OpaquePointer

    // Created once and never changed: OpenSSL only reads a BIO_METHOD after setup.
    nonisolated(unsafe) private static let method: OpaquePointer? = {
        guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "cohort CMS content") else { return nil }
        BIO_meth_set_read(method) { bio, buffer, length in
            guard let bio, let buffer, let data = BIO_get_data(bio) else { return -1 }
            return Unmanaged<ContentSource>.fromOpaque(data).takeUnretainedValue().read(into: buffer, Int(length))
        }
        BIO_meth_set_ctrl(method) { bio, command, _, _ in
            guard let bio, let data = BIO_get_data(bio) else { return 0 }
            let source = Unmanaged<ContentSource>.fromOpaque(data).takeUnretainedValue()
            switch command {
            case BIO_CTRL_EOF: return source.index >= source.pieces.count ? 1 : 0
            case BIO_CTRL_FLUSH: return 1
            default: return 0
            }
        }
        return method
    }()

    init(descriptor: Int32, pieces: [(offset: UInt64, length: Int)]) throws {
        fd = descriptor
        self.pieces = pieces
        guard let method = Self.method, let bio = BIO_new(method) else { throw OpenSSL.systemError("could not create a content BIO") }
        self.bio = bio
        BIO_set_data(bio, Unmanaged.passUnretained(self).toOpaque())
        BIO_set_init(bio, 1)
    }

    deinit {
        BIO_set_data(bio, nil)
        BIO_free(bio)
    }

    private func read(into buffer: UnsafeMutablePointer<CChar>, _ length: Int) -> Int32 {
        guard index < pieces.count, length > 0 else { return 0 }
        let piece = pieces[index]
        let count = min(length, piece.length - consumed)
        let got = pread(fd, buffer, count, off_t(piece.offset) + off_t(consumed))
        guard got > 0 else { return -1 }
        consumed += got
        if consumed == piece.length {
            index += 1
            consumed = 0
        }
        return Int32(got)
    }
}
