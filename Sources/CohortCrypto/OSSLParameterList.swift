import COpenSSL

/// An `OSSL_PARAM` array whose keys and values live in memory this object owns, so the
/// pointers OpenSSL keeps inside the array stay valid for as long as the list exists.
/// All owned memory is cleansed before it is released (values may be key material).
final class OSSLParameterList {
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    private var parameters: [OSSL_PARAM] = []

    deinit {
        for buffer in buffers {
            if let base = buffer.baseAddress { OPENSSL_cleanse(base, buffer.count) }
            buffer.deallocate()
        }
    }

    /// Copies `bytes` into owned memory followed by `terminator` extra zero bytes.
    private func copy<C: Collection<UInt8>>(_ bytes: C, zeroBytesAfter terminator: Int) -> UnsafeMutableRawBufferPointer {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count + terminator, 1), alignment: 1)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.copyBytes(from: bytes)
        buffers.append(buffer)
        return buffer
    }

    private func cString(_ text: String) -> UnsafeMutablePointer<CChar>? {
        copy(text.utf8, zeroBytesAfter: 1).baseAddress?.assumingMemoryBound(to: CChar.self)
    }

    /// Adds a UTF-8 string parameter (e.g. a digest name).
    func addUTF8String(key: String, value: String) {
        parameters.append(OSSL_PARAM_construct_utf8_string(cString(key), cString(value), 0))
    }

    /// Adds an octet-string parameter.
    func addOctetString(key: String, value: [UInt8]) {
        let buffer = copy(value, zeroBytesAfter: 0)
        parameters.append(OSSL_PARAM_construct_octet_string(cString(key), buffer.baseAddress, value.count))
    }

    /// Calls `body` with the `OSSL_PARAM_END`-terminated array.
    func withParameters<R>(_ body: (UnsafePointer<OSSL_PARAM>?) throws -> R) rethrows -> R {
        var terminated = parameters
        terminated.append(OSSL_PARAM_construct_end())
        return try terminated.withUnsafeBufferPointer { try body($0.baseAddress) }
    }
}
