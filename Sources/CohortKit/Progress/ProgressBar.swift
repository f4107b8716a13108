import Foundation
import Synchronization

/// Draws a ``ProgressLine`` on stderr, redrawn at most ten times a second — only when `enabled`
/// (the caller passes "stderr is a terminal and `--quiet` was not given"); otherwise it writes
/// nothing at all. Safe to update from any thread.
public final class ProgressBar: Sendable {
    private struct State {
        var done = 0
        var total: Int?
        var lastDraw: Double = -1
        var drawn = false
    }

    private let label: String
    private let unit: ProgressLine.Unit
    private let start = Date()
    private let enabled: Bool
    private let state: Mutex<State>

    /// A bar for `label`, counting `unit`, out of `total` when known; draws only when `enabled`.
    public init(_ label: String, unit: ProgressLine.Unit, total: Int? = nil, enabled: Bool) {
        self.label = label
        self.unit = unit
        self.enabled = enabled
        self.state = Mutex(State(total: total))
    }

    /// Records progress (`done` so far, and the total when it becomes known) and redraws if due.
    public func update(_ done: Int, total: Int? = nil) {
        guard enabled else { return }
        let elapsed = Date().timeIntervalSince(start)
        let line: String? = state.withLock { s in
            s.done = done
            if let total { s.total = total }
            guard elapsed - s.lastDraw >= 0.1 else { return nil }
            s.lastDraw = elapsed
            s.drawn = true
            return ProgressLine(label: label, done: s.done, total: s.total, unit: unit, elapsed: elapsed).render()
        }
        if let line { FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8)) }
    }

    /// Clears the line (call when the work ends, before printing results).
    public func finish() {
        guard enabled, state.withLock({ $0.drawn }) else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
    }
}
