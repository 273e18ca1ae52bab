import Synchronization

/// What a command leaves to the end of its process. A command that loaded
/// a million records would otherwise release them one by one as it
/// returns, a walk over the whole value (a cache miss per record) just
/// before `exit` hands the memory back at once (0.7 s of `strata get`'s
/// 2.5 s on a 1M store). The commands keep every store they open (which
/// holds its current value after closing) and every past value they build.
enum ProcessEnd {
    private static let kept = Mutex<[any Sendable]>([])

    /// Keeps `value` until the process exits. O(1).
    static func keep(_ value: some Sendable) {
        kept.withLock { $0.append(value) }
    }

    /// `value`, kept until the process exits. O(1).
    static func kept<Value: Sendable>(_ value: Value) -> Value {
        keep(value)
        return value
    }
}
