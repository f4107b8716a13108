import Foundation

/// Sees the bytes a ``BufferedFileWriter`` hands to the operating system, in file order, and the
/// file's identity once it is closed — so a digest of a file can be computed as it is written,
/// without reading it back (the export's bag, see `PayloadDigests`).
package protocol FileWriteTap: AnyObject {
    /// The next bytes of the file, in order (each byte exactly once).
    func wrote(_ bytes: UnsafeRawBufferPointer)
    /// The file is complete; `identity` is what `fstat` said just before it was closed.
    func closed(identity: FileIdentity)
}

/// Which tap (if any) sees the file written at a bag-relative path, and which files are written
/// to their taps alone (``withoutDiskCopy(where:)``).
package struct FileWriteTaps: Sendable {
    private let make: @Sendable (String) -> (any FileWriteTap)?
    private let tapsAlone: @Sendable (String) -> Bool

    /// Taps made by `make` for each file's relative path (nil: that file is not tapped).
    package init(_ make: @escaping @Sendable (String) -> (any FileWriteTap)?) {
        self.init(make, tapsAlone: { _ in false })
    }

    private init(_ make: @escaping @Sendable (String) -> (any FileWriteTap)?, tapsAlone: @escaping @Sendable (String) -> Bool) {
        self.make = make
        self.tapsAlone = tapsAlone
    }

    /// The tap for the file at `relativePath`.
    package func tap(for relativePath: String) -> (any FileWriteTap)? { make(relativePath) }

    /// Whether the tapped file at `relativePath` is written to its tap alone, with no copy on disk.
    package func writesTapAlone(_ relativePath: String) -> Bool { tapsAlone(relativePath) }

    /// These taps, with each tapped file for which `predicate` holds written to its tap alone: a
    /// ``BufferedFileWriter`` then creates no file, hands every byte to the tap only, and closes
    /// it with ``FileIdentity/tapOnly(size:)``. Only for files whose taps keep everything a
    /// reader of the file would need (the export's archive: the deflate spool, the digests and
    /// the residual scan); `predicate` is asked once per file, as its writer opens it.
    package func withoutDiskCopy(where predicate: @escaping @Sendable (String) -> Bool) -> FileWriteTaps {
        FileWriteTaps(make, tapsAlone: predicate)
    }

    /// Taps that show each file to `self`'s tap and then to `other`'s (either may have none); a
    /// file is written to them alone when either says so.
    package func and(_ other: FileWriteTaps) -> FileWriteTaps {
        FileWriteTaps(
            { path in
                switch (self.tap(for: path), other.tap(for: path)) {
                case (let first?, let second?): TapPair(first: first, second: second)
                case (let first?, nil): first
                case (nil, let second): second
                }
            }, tapsAlone: { path in self.writesTapAlone(path) || other.writesTapAlone(path) })
    }
}

/// Two taps seeing the same file, in order.
private final class TapPair: FileWriteTap {
    let first: any FileWriteTap
    let second: any FileWriteTap

    init(first: any FileWriteTap, second: any FileWriteTap) {
        self.first = first
        self.second = second
    }

    func wrote(_ bytes: UnsafeRawBufferPointer) {
        first.wrote(bytes)
        second.wrote(bytes)
    }

    func closed(identity: FileIdentity) {
        first.closed(identity: identity)
        second.closed(identity: identity)
    }
}

/// What identifies one version of a file's content without reading it: device, inode, size, and
/// the modification and status-change times to the nanosecond. Writing to the file, truncating
/// it, replacing it by a rename or setting its times changes at least one of them.
package struct FileIdentity: Sendable, Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modified: timespec
    let changed: timespec

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        modified = info.st_mtim
        changed = info.st_ctim
    }

    /// The identity a writer gives its tap for a file written to the tap alone
    /// (``FileWriteTaps/withoutDiskCopy(where:)``): its size, and a device and inode no file on
    /// disk has (`fstat` and `lstat` never report them), so it never equals a file's on disk.
    package static func tapOnly(size: UInt64) -> FileIdentity {
        FileIdentity(device: .max, inode: .max, size: Int64(size))
    }

    /// Whether this is the identity of a file written to its tap alone (``tapOnly(size:)``).
    package var isTapOnly: Bool { device == .max && inode == .max }

    private init(device: UInt64, inode: UInt64, size: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        modified = timespec()
        changed = timespec()
    }

    /// The identity of the open file `descriptor`, or nil when `fstat` fails.
    package init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The identity of the file at `path` (symbolic links not followed), or nil when `lstat` fails.
    package init?(path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The file size in bytes.
    package var byteCount: UInt64 { UInt64(size) }
    /// The modification time: seconds since the epoch and nanoseconds.
    package var modifiedTime: (seconds: Int, nanoseconds: Int) { (Int(modified.tv_sec), Int(modified.tv_nsec)) }

    package static func == (a: FileIdentity, b: FileIdentity) -> Bool {
        a.device == b.device && a.inode == b.inode && a.size == b.size && a.modified.tv_sec == b.modified.tv_sec
            && a.modified.tv_nsec == b.modified.tv_nsec && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }
}
