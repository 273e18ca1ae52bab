import Synchronization

/// A value passed from a background thread to the store's actor, which
/// takes it out. A task's captures are freed where the task ends, on the
/// actor: a large result captured directly (a compaction round's blocks)
/// would be freed there, holding the actor — and every commit behind it —
/// for as long as freeing takes. Taken out of a handoff, it is the
/// taker's to let go of where it chooses.
final class Handoff<Value: Sendable>: Sendable {
    private let slot: Mutex<Value?>

    init(_ value: consuming sending Value) { slot = Mutex(value) }

    /// The value, the first time; nil after. O(1).
    func take() -> Value? { slot.withLock { $0.take() } }
}
