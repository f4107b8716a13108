import COpenSSL

// Final classes owning OpenSSL contexts: each frees its C object in deinit, so no code path can
// leak one or use it after release.

/// Owns an `EVP_KDF_CTX` (and the fetched `EVP_KDF`).
final class KDFContext {
    let pointer: OpaquePointer

    init(algorithm: String) throws {
        guard let kdf = EVP_KDF_fetch(nil, algorithm, nil) else {
            throw OpenSSL.systemError("OpenSSL does not provide the \(algorithm) key derivation")
        }
        defer { EVP_KDF_free(kdf) }
        guard let context = EVP_KDF_CTX_new(kdf) else {
            throw OpenSSL.systemError("could not create a key-derivation context")
        }
        pointer = context
    }

    deinit {
        EVP_KDF_CTX_free(pointer)
    }
}

/// Owns an `EVP_CIPHER_CTX`.
final class CipherContext {
    let pointer: OpaquePointer

    init() throws {
        guard let context = EVP_CIPHER_CTX_new() else { throw OpenSSL.systemError("could not create a cipher context") }
        pointer = context
    }

    deinit {
        EVP_CIPHER_CTX_free(pointer)
    }
}

/// Owns an `EVP_MD_CTX` used for one sign or verify operation.
final class DigestContext {
    let pointer: OpaquePointer

    init() throws {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSL.systemError("could not create a digest context") }
        pointer = context
    }

    deinit {
        EVP_MD_CTX_free(pointer)
    }
}

/// Owns an OpenSSL memory `BIO`, for PEM encoding and decoding.
final class MemoryBIO {
    let pointer: OpaquePointer
    /// Keeps the bytes a read-only BIO points into alive.
    private let storage: UnsafeMutableRawBufferPointer?

    /// An empty, writable memory BIO.
    init() throws {
        guard let bio = BIO_new(BIO_s_mem()) else { throw OpenSSL.systemError("could not create a memory BIO") }
        pointer = bio
        storage = nil
    }

    /// A read-only memory BIO over a private copy of `contents`.
    init(contents: [UInt8]) throws {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(contents.count, 1), alignment: 1)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.copyBytes(from: contents)
        guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(contents.count)) else {
            buffer.deallocate()
            throw OpenSSL.systemError("could not create a memory BIO")
        }
        pointer = bio
        storage = buffer
    }

    deinit {
        BIO_free(pointer)
        if let storage {
            // The PEM text may be a private key.
            if let base = storage.baseAddress { OPENSSL_cleanse(base, storage.count) }
            storage.deallocate()
        }
    }

    /// Everything written so far, as UTF-8 text.
    func text() throws -> String {
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = BIO_read(pointer, &chunk, Int32(chunk.count))
            if count <= 0 { break }
            output.append(contentsOf: chunk.prefix(Int(count)))
        }
        OPENSSL_cleanse(&chunk, chunk.count)
        return String(decoding: output, as: UTF8.self)
    }
}
