#if canImport(Glibc)
    import Glibc
#endif

/// How an export or a verify keeps this process's resident memory at what it holds, not at the
/// high-water mark of what it once held (glibc's allocator; nothing elsewhere).
///
/// Changing the allocator's settings is the host process's decision, not a library's: an export
/// or a verify never calls ``returnLargeBlocksWhenFreed()`` itself. The `cohort` and
/// `cohort-bench` executables opt in at start; an application embedding CohortKit may do the same.
public enum ProcessMemory {
    /// Hands the memory freed so far back to the system (glibc keeps freed blocks in its heap,
    /// so the resident size would keep the high-water mark of building an identifier index —
    /// a transient per-participant structure — through the whole streaming stage after it).
    static func returnFreedMemory() {
        #if canImport(Glibc)
        // `malloc_trim` is glibc's (malloc.h, which the Glibc module does not export): looked up
        // once; a C library without it has nothing to trim this way.
        if let trim = mallocTrim { _ = trim(0) }
        #endif
    }

    /// Asks glibc to give every block of 128 KiB or more its own mapping, returned to the system
    /// as soon as it is freed. glibc raises this threshold by itself each time such a block is
    /// freed (up to 32 MiB), after which large transient tables (an identifier collection, a
    /// k-anonymity table, inflate and scan buffers) would be carved from the heap and keep the
    /// resident size at their high-water mark. Done once per process; it applies to the whole
    /// process (every allocation of every thread), which is why only an executable calls it.
    /// On bench M it keeps the export's peak resident memory about 5 MB lower (issue 28).
    public static func returnLargeBlocksWhenFreed() {
        #if canImport(Glibc)
        _ = fixedMmapThreshold
        #endif
    }

    #if canImport(Glibc)
    private static let fixedMmapThreshold: Bool = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else { return false }
        let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
        return mallopt(-3, 128 * 1024) == 1  // M_MMAP_THRESHOLD (malloc.h)
    }()

    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
    }()
    #endif
}
