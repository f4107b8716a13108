import CPCRE2

/// One regular expression compiled by PCRE2 (Debian's libpcre2-8) and JIT-compiled once, matched
/// on UTF-8 bytes. The scrubber's patterns run here for the text ``PCRE2Route`` allows (see
/// ``ASCIIPatternTranslation`` for why that is the same as ICU's `NSRegularExpression`).
///
/// The compiled code is immutable after `init` and PCRE2 documents it as shareable between
/// threads; what a match writes goes to a ``PCRE2Expression/Scratch`` made per call, never shared.
final class PCRE2Expression: Sendable {
    // The one property the compiler cannot check (an OpaquePointer is not Sendable), opted out
    // alone rather than the whole type: it is set once in `init` and never changed, PCRE2 only
    // reads compiled and JIT-compiled code while matching (pcre2api, "Multithreading": the
    // same code may be used by several threads at once), and it is freed in `deinit`, when no
    // thread can hold the expression any more.
    nonisolated(unsafe) private let code: OpaquePointer

    /// Compiles `pattern` (PCRE2 syntax, UTF-8) with PCRE2_UTF, and JIT-compiles it when the
    /// library has a JIT for this machine (otherwise PCRE2's interpreter runs it, with the same
    /// results).
    init(pattern: String) throws(PCRE2CompileError) {
        var errorCode: Int32 = 0
        var errorOffset = 0
        let bytes = Array(pattern.utf8)
        let compiled = bytes.withUnsafeBufferPointer { p in
            pcre2_compile_8(p.baseAddress, p.count, UInt32(PCRE2_UTF), &errorCode, &errorOffset, nil)
        }
        guard let compiled else {
            var message = [UInt8](repeating: 0, count: 256)
            let length = pcre2_get_error_message_8(errorCode, &message, message.count)
            let text = String(decoding: message.prefix(max(0, Int(length))), as: UTF8.self)
            throw PCRE2CompileError(message: text, offset: errorOffset)
        }
        code = compiled
        // A failed JIT compile leaves the interpreter in charge; pcre2_match picks either.
        _ = pcre2_jit_compile_8(code, UInt32(PCRE2_JIT_COMPLETE))
    }

    deinit { pcre2_code_free_8(code) }

    /// PCRE2_UNSET, `~(PCRE2_SIZE)0`, as Swift imports `size_t` (a macro Swift cannot import).
    private static let unset = Int(bitPattern: UInt.max)

    /// Where a match lies (byte offsets into the subject handed in) and the first top-level
    /// capture group that took part in it (0 for the pattern's first group), or -1 for none.
    struct Match: Equatable {
        var start: Int
        var end: Int
        var group: Int
    }

    /// What one search found: a match, none, or a failure (a PCRE2 resource limit such as the
    /// JIT stack or the match limit), after which the caller must not trust "no match".
    enum Outcome: Equatable {
        case match(Match)
        case none
        case failed
    }

    /// The match data of one thread's searches: PCRE2's `pcre2_match_data` is written by every
    /// match, so it is never shared between threads. Make one per call and pass it down.
    final class Scratch {
        fileprivate let data: OpaquePointer?
        init(for expression: PCRE2Expression) { data = pcre2_match_data_create_from_pattern_8(expression.code, nil) }
        deinit { pcre2_match_data_free_8(data) }
    }

    /// The first match in `subject` at or after byte `offset`. The subject is all PCRE2 sees:
    /// a lookbehind or `\b` at its first byte sees nothing before it, even when the bytes come
    /// from a longer text (hand a slice for NSRegularExpression's default, opaque bounds; hand
    /// the whole text and an offset for its successive `matches(in:)`).
    func firstMatch(in subject: UnsafeBufferPointer<UInt8>, from offset: Int, scratch: Scratch) -> Outcome {
        guard let data = scratch.data else { return .failed }
        // A zero-length subject still needs a valid pointer.
        let empty: UInt8 = 0
        let rc = withUnsafePointer(to: empty) { fallback in
            pcre2_match_8(code, subject.baseAddress ?? fallback, subject.count, offset, UInt32(PCRE2_NO_UTF_CHECK), data, nil)
        }
        if rc == PCRE2_ERROR_NOMATCH { return .none }
        guard rc > 0, let vector = pcre2_get_ovector_pointer_8(data) else { return .failed }
        var group = -1
        for k in 1..<Int(rc) where vector[2 * k] != Self.unset {
            group = k - 1
            break
        }
        return .match(Match(start: vector[0], end: vector[1], group: group))
    }
}

/// PCRE2 refused a pattern (a translation the scrubber made; a bug, never input).
struct PCRE2CompileError: Error, CustomStringConvertible {
    var message: String
    var offset: Int
    var description: String { "PCRE2 could not compile the pattern at offset \(offset): \(message)" }
}
