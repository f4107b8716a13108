/// Counts the items of a FHIR Bundle's top-level `entry` array from its JSON bytes, fed in
/// chunks, in constant memory: a streaming scan of the JSON structure (strings and escapes,
/// nesting of objects and arrays, which key of the root object a value belongs to).
///
/// It checks the structure a count depends on — the root is one object, brackets match, strings
/// and the document end where they should, `entry` (when present) is an array — but not the
/// grammar of numbers and literals; the bytes themselves are checked by their signed digest.
struct BundleEntryCounter: Sendable {
    /// Why the bytes cannot be counted.
    enum Problem: String, Error, Sendable {
        case notObject = "is not a JSON object"
        case mismatched = "has mismatched brackets"
        case truncated = "ends before its JSON is complete"
        case trailing = "has content after its JSON object"
        case entryNotArray = "`entry` is not an array"
        case tooDeep = "nests deeper than 512 levels"
    }

    private static let maximumDepth = 512
    private static let entryKey = Array("entry".utf8)

    /// Open containers, innermost last: `{` or `[`.
    private var stack: [UInt8] = []
    private var rootSeen = false
    private var inString = false
    private var escaped = false
    /// In the root object, the next string is a key.
    private var expectingKey = false
    /// Capturing a root key: bytes so far and whether they still spell `entry`.
    private var capturingKey = false
    private var keyLength = 0
    private var keyMatches = false
    private var lastKeyIsEntry = false
    /// After `"entry":`, the next value must be an array.
    private var pendingEntryValue = false
    /// Depth of the open `entry` array (0 when not inside it).
    private var entryDepth = 0
    private var awaitingElement = false
    private var count = 0
    private var problem: Problem?

    /// Adds the next bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard problem == nil else { return }
        for byte in bytes {
            if inString {
                consumeStringByte(byte)
                continue
            }
            consume(byte)
            if problem != nil { return }
        }
    }

    /// The number of entries.
    ///
    /// - Throws: ``Problem`` when the bytes are not a complete JSON object or `entry` is not an array.
    func finish() throws(Problem) -> Int {
        if let problem { throw problem }
        guard rootSeen else { throw Problem.notObject }
        guard stack.isEmpty, !inString else { throw Problem.truncated }
        return count
    }

    private mutating func consumeStringByte(_ byte: UInt8) {
        if escaped {
            escaped = false
            if capturingKey { keyMatches = false }
        } else if byte == UInt8(ascii: "\\") {
            escaped = true
        } else if byte == UInt8(ascii: "\"") {
            inString = false
            if capturingKey {
                capturingKey = false
                lastKeyIsEntry = keyMatches && keyLength == Self.entryKey.count
            }
        } else if capturingKey {
            keyMatches = keyMatches && keyLength < Self.entryKey.count && Self.entryKey[keyLength] == byte
            keyLength += 1
        }
    }

    private mutating func consume(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"):
            return
        default:
            break
        }
        if stack.isEmpty {
            guard !rootSeen else { return fail(.trailing) }
            guard byte == UInt8(ascii: "{") else { return fail(.notObject) }
            rootSeen = true
            stack.append(byte)
            expectingKey = true
            return
        }
        // An element of the entry array starts with any byte other than `,` and `]`.
        if entryDepth != 0, stack.count == entryDepth, awaitingElement, byte != UInt8(ascii: ","), byte != UInt8(ascii: "]") {
            count += 1
            awaitingElement = false
        }
        // A value of the root object: the one after `"entry":` must be an array.
        if stack.count == 1, !expectingKey, pendingEntryValue, byte != UInt8(ascii: ":") {
            pendingEntryValue = false
            guard byte == UInt8(ascii: "[") else { return fail(.entryNotArray) }
            stack.append(byte)
            entryDepth = stack.count
            awaitingElement = true
            return
        }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard stack.count < Self.maximumDepth else { return fail(.tooDeep) }
            stack.append(byte)
        case UInt8(ascii: "}"), UInt8(ascii: "]"):
            let opener = byte == UInt8(ascii: "}") ? UInt8(ascii: "{") : UInt8(ascii: "[")
            guard stack.last == opener else { return fail(.mismatched) }
            if stack.count == entryDepth { entryDepth = 0 }
            stack.removeLast()
        case UInt8(ascii: ","):
            if stack.count == 1 { expectingKey = true }
            if stack.count == entryDepth { awaitingElement = true }
        case UInt8(ascii: ":"):
            if stack.count == 1 {
                expectingKey = false
                pendingEntryValue = lastKeyIsEntry
            }
        case UInt8(ascii: "\""):
            inString = true
            if stack.count == 1, expectingKey {
                capturingKey = true
                keyLength = 0
                keyMatches = true
            }
        default:
            break
        }
    }

    private mutating func fail(_ problem: Problem) {
        self.problem = problem
    }
}
