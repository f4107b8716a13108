import COpenSSL
import CohortCore

/// Internal helpers shared by the OpenSSL wrappers: error capture and success checks.
enum OpenSSL {
    /// Drains OpenSSL's thread-local error queue into one short description.
    ///
    /// OpenSSL error strings name the failing function and reason, never key material, so they
    /// are safe to carry as `CohortError.underlying`.
    static func drainErrors() -> String? {
        var reasons: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
            reasons.append(String(decoding: bytes, as: UTF8.self))
        }
        return reasons.isEmpty ? nil : reasons.joined(separator: "; ")
    }

    /// An error for an OpenSSL call that failed for reasons outside the caller's input.
    static func systemError(_ message: String) -> CohortError {
        CohortError(.system, message, hint: "check the OpenSSL 3 installation (libcrypto)", underlying: drainErrors())
    }

    /// Throws `.system` unless an OpenSSL call returned 1 (its success value).
    static func check(_ result: Int32, _ message: @autoclosure () -> String) throws {
        guard result == 1 else { throw systemError(message()) }
    }

    /// For calls that can only fail when memory is exhausted: there is no useful recovery, and
    /// the non-throwing hash APIs stay non-throwing.
    static func require(_ condition: Bool, _ message: @autoclosure () -> String) {
        precondition(condition, message())
    }
}

/// Calls `body` with a pointer to `bytes`, never `nil` even when `bytes` is empty.
///
/// Some OpenSSL entry points treat a `NULL` buffer differently from an empty one; a stable
/// one-byte dummy keeps empty inputs on the ordinary path.
func withNonNullBytes<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) throws -> R) rethrows -> R {
    try bytes.withUnsafeBufferPointer { buffer in
        if let base = buffer.baseAddress, buffer.count > 0 {
            return try body(base, buffer.count)
        }
        let dummy: UInt8 = 0
        return try withUnsafePointer(to: dummy) { try body($0, 0) }
    }
}
