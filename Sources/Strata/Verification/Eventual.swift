import Dispatch
import Synchronization

/// A value computed on another thread from the moment it is made, taken
/// once it is there: verify's decoding of the next run of transactions
/// while the replay applies this one, and its snapshot comparisons.
final class Eventual<Value: Sendable>: Sendable {
    private let done = DispatchGroup()
    private let value = Mutex<Value?>(nil)

    /// Starts `work` on `queue`.
    init(on queue: DispatchQueue = .global(), _ work: @escaping @Sendable () -> Value) {
        queue.async(group: done) {
            let computed = work()
            self.value.withLock { $0 = computed }
        }
    }

    /// The value, once computed; taken out, so that the caller holds the
    /// only reference to it. Call it (or a `takeIfDone()` that returned
    /// it) once.
    func take() -> Value {
        done.wait()
        return value.withLock { $0.take()! }
    }

    /// The value if it has been computed (taken out, as by `take()`), else
    /// nil at once.
    func takeIfDone() -> Value? {
        value.withLock { $0.take() }
    }
}
