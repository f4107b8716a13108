import CohortCore
import CohortCrypto
package import CohortIO
import Synchronization

/// The bag's description of payload files (size, SHA-256, rows), computed from the bytes as their
/// writers write them (``FileWriteTap``), so ``BagWriter`` need not read the payload back.
///
/// A description is used only for the file version it was computed from: with each one the
/// file's identity at close is kept (``FileIdentity``: inode, size, modification and change
/// times), and the bag reads any file whose identity is no longer that one — changed, replaced
/// or touched after its writer closed it — exactly as it reads a file written without a tap.
/// A file written to its taps alone (``FileIdentity/isTapOnly``) has no copy on disk: its
/// description (``tapOnlyFiles``) is all the bag has of it.
package final class PayloadDigests: Sendable {
    private let described = Mutex<[String: (file: BagFile, identity: FileIdentity)]>([:])

    package init() {}

    /// Taps for `BufferedFileWriter`: every file under `data/` is described as it is written.
    package var taps: FileWriteTaps {
        FileWriteTaps { [self] path in path.hasPrefix("data/") ? Tap(path: path, digests: self) : nil }
    }

    /// The description of the file at bag-relative `path` if it was computed while writing the
    /// version of the file that `identity` names; nil otherwise (the file must be read).
    package func description(of path: String, identity: FileIdentity?) -> BagFile? {
        guard let identity else { return nil }
        return described.withLock { found in
            guard let entry = found[path], entry.identity == identity else { return nil }
            return entry.file
        }
    }

    /// The descriptions of the files written to their taps alone (``FileIdentity/isTapOnly``:
    /// no copy of them is on disk).
    package var tapOnlyFiles: [BagFile] { described.withLock { $0.values.filter { $0.identity.isTapOnly }.map(\.file) } }

    /// Files described so far (tests).
    package var count: Int { described.withLock { $0.count } }

    private func record(_ file: BagFile, identity: FileIdentity) {
        described.withLock { $0[file.path] = (file, identity) }
    }

    /// One file's running digest, size and row count, as ``BagWriter/hash(path:relative:)``
    /// computes them from the file.
    private final class Tap: FileWriteTap {
        let path: String
        let digests: PayloadDigests
        let hasher = SHA256Hasher()
        var counter: RowCounter?
        var size: UInt64 = 0

        init(path: String, digests: PayloadDigests) {
            self.path = path
            self.digests = digests
            counter = RowCounter(path: path)
        }

        func wrote(_ bytes: UnsafeRawBufferPointer) {
            hasher.update(bytes)
            counter?.update(bytes)
            size += UInt64(bytes.count)
        }

        func closed(identity: FileIdentity) {
            // A count the rule refuses (a CSV ending inside quotes) is left to the bag's own read,
            // which refuses the file with its error.
            let rows: Int?
            if let counter {
                guard let counted = try? counter.finish() else { return }
                rows = counted
            } else {
                rows = nil
            }
            guard size == identity.byteCount else { return }
            digests.record(BagFile(path: path, size: size, sha256: Hex.encode(hasher.finalize()), rows: rows), identity: identity)
        }
    }
}
