import Foundation

/// The residual scan's JSON key path while it walks a JSON text: per open container whether it
/// is an object, its current key (where it starts in the path, its length, its ``KeyClass``),
/// and the path itself as UTF-8 — the open containers' non-empty keys joined by `.`, kept as a
/// stack (a key replaces its container's part, a closed container's part is cut off).
///
/// The storage is two buffers this object owns, reused from line to line and grown by doubling:
/// the walk sets a key for every key of every line (about 25 per FHIR resource), and Swift
/// arrays checked uniqueness and went through the generic range replacement on each of them
/// (issue 28, sixth round). One stack belongs to one ``ResidualScanner/ValueScanner``, on one
/// thread.
final class JSONKeyStack {
    typealias KeyClass = ResidualScanner.ValueScanner.KeyClass

    struct Frame {
        var isObject: Bool
        /// Where the container's key starts in the path (its `.` included).
        var keyStart: Int
        /// The key's length in bytes (0: none yet, an empty key, or an array).
        var keyLength: Int
        var keyClass: KeyClass
    }

    /// How many containers are open.
    private(set) var depth = 0
    private var frames: UnsafeMutablePointer<Frame>
    private var frameCapacity = 16
    private var path: UnsafeMutablePointer<UInt8>
    /// How many bytes of the path are in use.
    private(set) var pathCount = 0
    private var pathCapacity = 256

    init() {
        frames = .allocate(capacity: frameCapacity)
        path = .allocate(capacity: pathCapacity)
    }

    deinit {
        frames.deallocate()
        path.deallocate()
    }

    /// No container open, an empty path (an NDJSON line's start).
    @inline(__always)
    func reset() {
        depth = 0
        pathCount = 0
    }

    /// Whether the innermost open container is an object.
    @inline(__always)
    var inObject: Bool { depth > 0 && frames[depth - 1].isObject }

    /// The path's bytes (valid until the stack changes).
    @inline(__always)
    var pathBuffer: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: path, count: pathCount) }

    /// Opens a container (without a key yet).
    @inline(__always)
    func open(object: Bool) {
        if depth == frameCapacity {
            let grown = UnsafeMutablePointer<Frame>.allocate(capacity: frameCapacity * 2)
            grown.moveInitialize(from: frames, count: depth)
            frames.deallocate()
            frames = grown
            frameCapacity *= 2
        }
        (frames + depth).initialize(to: Frame(isObject: object, keyStart: pathCount, keyLength: 0, keyClass: .none))
        depth += 1
    }

    /// Closes the innermost container: its key leaves the path.
    @inline(__always)
    func close() {
        guard depth > 0 else { return }
        depth -= 1
        pathCount = frames[depth].keyStart
    }

    /// The innermost container's key is now `raw` (its JSON string content); a container must
    /// be open.
    @inline(__always)
    func setKey(_ raw: UnsafeBufferPointer<UInt8>) {
        let d = depth - 1
        pathCount = frames[d].keyStart
        frames[d].keyLength = raw.count
        frames[d].keyClass = ResidualScanner.ValueScanner.keyClass(raw)
        guard let source = raw.baseAddress, !raw.isEmpty else { return }
        let dot = pathCount > 0 ? 1 : 0
        reserve(pathCount + dot + raw.count)
        if dot == 1 {
            path[pathCount] = 0x2E
            pathCount += 1
        }
        (path + pathCount).update(from: source, count: raw.count)
        pathCount += raw.count
    }

    private func reserve(_ count: Int) {
        guard count > pathCapacity else { return }
        var capacity = pathCapacity * 2
        while capacity < count { capacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        grown.update(from: path, count: pathCount)
        path.deallocate()
        path = grown
        pathCapacity = capacity
    }

    /// The key path of the current value: the keys of the open objects, joined by dots (each key
    /// decoded on its own, as the path has always been made).
    func keyPath() -> String {
        (0..<depth).filter { frames[$0].keyLength > 0 }.map { d in
            let start = frames[d].keyStart + (frames[d].keyStart > 0 ? 1 : 0)  // after the `.` before it
            return String(decoding: UnsafeBufferPointer(start: path + start, count: frames[d].keyLength), as: UTF8.self)
        }.joined(separator: ".")
    }

    /// Whether the current value's key is fixed vocabulary: the last open container's key that
    /// is not empty is a fixed key, or `display` with a `coding` among the open keys.
    @inline(__always)
    func isFixedField() -> Bool {
        var d = depth - 1
        while d >= 0, frames[d].keyLength == 0 { d -= 1 }
        guard d >= 0 else { return false }
        switch frames[d].keyClass {
        case .fixed: return true
        case .display:
            for e in 0..<depth where frames[e].keyClass == .coding { return true }
            return false
        default: return false
        }
    }
}
