import Foundation
import Synchronization

/// A value made on a thread of its own while its caller goes on, for work that is needed later
/// than it can start: an export's scrubber and residual scanner are built while the k-anonymity
/// pass runs (issue 28, seventeenth round). ``value()`` waits for it and gives what the work
/// gave, the value or the error that stopped it, to every caller.
package final class BackgroundValue<Value: Sendable>: Sendable {
    private let finished = DispatchGroup()
    private let result = Mutex<Result<Value, any Error>?>(nil)

    /// Starts `make()` on a new thread named `name`.
    package init(name: String, _ make: @escaping @Sendable () throws -> Value) {
        finished.enter()
        let thread = Thread {
            let made = Result { try make() }
            self.result.withLock { $0 = made }
            self.finished.leave()
        }
        thread.name = name
        thread.start()
    }

    /// The value, once made (waits for it), or the error that stopped its making.
    package func value() throws -> Value {
        finished.wait()
        guard let made = result.withLock({ $0 }) else { preconditionFailure("a finished background value holds no result") }
        return try made.get()
    }
}
