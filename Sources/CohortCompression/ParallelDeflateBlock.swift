import CohortCore
import Dispatch

/// One fixed-size slice of a gzip stream's input, with what its compression produced.
///
/// The writer fills `input` and `dictionary`, then hands the block to ``ParallelDeflatePool``;
/// one worker compresses it, fills `output`, `crc` and `error`, and calls ``markCompressed()``;
/// the writer reads the results only after ``isCompressed(wait:)`` returned true, then reuses it.
final class ParallelDeflateBlock: @unchecked Sendable {
    // Why this is safe: the block is shared between the writer and one worker, but never used by
    // both at once. The writer touches it only before ``ParallelDeflatePool/submit(_:)`` (whose
    // queue lock orders the hand-over) and after ``isCompressed(wait:)`` has consumed the
    // `compressed` semaphore's one signal, which the worker gives after its last access; the
    // worker touches it only between taking it from the queue and that signal. A block is
    // submitted again only after it was collected and ``reset(after:)`` on the writer's thread.
    /// The input bytes of this block; `count` of them are valid.
    let input: UnsafeMutableRawBufferPointer
    var count = 0
    /// The last 32 KiB of the previous block's input (empty for the first block): deflate may
    /// refer back into it, as a single stream would, which keeps the ratio close to one stream's.
    let dictionary: UnsafeMutableRawBufferPointer
    var dictionaryCount = 0
    /// The last block ends the deflate stream (`Z_FINISH`); others end byte-aligned
    /// (`Z_SYNC_FLUSH`) so the next block's output can simply follow.
    var isLast = false

    /// Raw deflate output; `outputCount` bytes are valid. Grows when a block does not fit.
    private(set) var output: UnsafeMutableRawBufferPointer
    var outputCount = 0
    /// CRC-32 of `input[0..<count]` alone (combined in order by the writer).
    var crc: UInt32 = 0
    /// Set by a worker when zlib failed on this block.
    var error: CohortError?
    /// Signalled once by the thread that compressed the block.
    private let compressed = DispatchSemaphore(value: 0)
    /// Whether the writer has seen `compressed` (touched by the writer only).
    private var collected = false

    /// deflate's window: how far back a match may reach, hence how much dictionary helps.
    static let dictionarySize = 32 * 1024

    init(blockSize: Int) {
        input = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize, alignment: 16)
        dictionary = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.dictionarySize, alignment: 16)
        // Incompressible input comes out as stored blocks: 5 bytes per 64 KiB plus the flush
        // marker, well within this margin; `growOutput` covers anything else.
        output = UnsafeMutableRawBufferPointer.allocate(byteCount: blockSize + blockSize / 8 + 1024, alignment: 16)
    }

    deinit {
        input.deallocate()
        dictionary.deallocate()
        output.deallocate()
    }

    /// Empties the block for reuse, taking the tail of `previous`'s input as its dictionary
    /// (or none when `previous` is nil).
    func reset(after previous: ParallelDeflateBlock?) {
        count = 0
        outputCount = 0
        crc = 0
        error = nil
        collected = false
        isLast = false
        dictionaryCount = 0
        guard let previous else { return }
        let length = min(previous.count, Self.dictionarySize)
        guard length > 0 else { return }
        let tail = UnsafeRawBufferPointer(rebasing: previous.input[(previous.count - length)..<previous.count])
        UnsafeMutableRawBufferPointer(rebasing: dictionary[0..<length]).copyMemory(from: tail)
        dictionaryCount = length
    }

    /// Called by the thread that compressed the block, after its last access to it.
    func markCompressed() {
        compressed.signal()
    }

    /// Writer: whether the block is compressed, waiting for it first when `wait` is true.
    func isCompressed(wait: Bool) -> Bool {
        if collected { return true }
        if wait {
            compressed.wait()
        } else if compressed.wait(timeout: .now()) == .timedOut {
            return false
        }
        collected = true
        return true
    }

    /// Doubles the output capacity, keeping the bytes already produced.
    func growOutput() {
        let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: output.count * 2, alignment: 16)
        larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: output[0..<outputCount]))
        output.deallocate()
        output = larger
    }
}
