/// What rebuilding costs on this machine, measured as the store works:
/// nanoseconds per byte of snapshot read and decoded, and per byte of log
/// replayed (read, decoded, flattened and applied, as open does). The
/// snapshot policy and the rebuild planner use these instead of counts.
///
/// Estimates start from figures measured on the development VM (1M-record
/// library: ~30 ns per compressed snapshot byte, ~75 ns per log byte of
/// single-record transactions) and move a quarter of the way to each new
/// measurement, so one noisy sample cannot swing a decision. Measurements
/// under 64 KiB are ignored: fixed costs dominate them.
public struct RebuildCosts: Sendable, Hashable {
    /// Nanoseconds to read and decode one byte of snapshot.
    public private(set) var snapshotNanosecondsPerByte = 30.0
    /// Nanoseconds to replay one byte of log.
    public private(set) var replayNanosecondsPerByte = 75.0

    /// Measurements of fewer bytes than this are ignored.
    public static let smallestSample = 64 << 10

    /// The starting estimates.
    public init() {}

    /// Takes in a snapshot read of `bytes` that took `nanoseconds`.
    public mutating func snapshotRead(bytes: Int, nanoseconds: Double) {
        guard bytes >= Self.smallestSample else { return }
        snapshotNanosecondsPerByte += (nanoseconds / Double(bytes) - snapshotNanosecondsPerByte) / 4
    }

    /// Takes in a replay of `logBytes` of log that took `nanoseconds`.
    public mutating func replayed(logBytes: Int, nanoseconds: Double) {
        guard logBytes >= Self.smallestSample else { return }
        replayNanosecondsPerByte += (nanoseconds / Double(logBytes) - replayNanosecondsPerByte) / 4
    }

    /// Reads a snapshot with `read`, taking in how long it took.
    mutating func timingSnapshotRead<Read>(
        _ read: () throws -> (Read, size: Int)
    ) rethrows -> (Read, size: Int) {
        let clock = ContinuousClock()
        let start = clock.now
        let result = try read()
        snapshotRead(bytes: result.size, nanoseconds: (clock.now - start).nanoseconds)
        return result
    }

    /// Replays `logBytes` of log with `replay`, taking in how long it took.
    mutating func timingReplay(logBytes: Int, _ replay: () throws -> Database) rethrows -> Database {
        let clock = ContinuousClock()
        let start = clock.now
        let value = try replay()
        replayed(logBytes: logBytes, nanoseconds: (clock.now - start).nanoseconds)
        return value
    }

    /// Estimated nanoseconds to rebuild a value from a snapshot of
    /// `snapshotBytes` and `logBytes` of log after it.
    public func rebuild(snapshotBytes: Int, logBytes: Int) -> Double {
        Double(snapshotBytes) * snapshotNanosecondsPerByte + Double(logBytes) * replayNanosecondsPerByte
    }

    /// One snapshot byte read costs this many log bytes replayed.
    public var snapshotByteWeight: Double { snapshotNanosecondsPerByte / replayNanosecondsPerByte }

    /// Whether a new snapshot is due under `budget` nanoseconds: when the
    /// rebuild from the last one (what open does) is estimated over it. When
    /// reading a snapshot alone exceeds the budget, a new one cannot bring
    /// open under it; then one is due when the log after the last costs as
    /// much as the snapshot, which bounds open to about twice a read.
    public func snapshotDue(budget: Double, snapshotBytes: Int, logBytes: Int) -> Bool {
        let read = rebuild(snapshotBytes: snapshotBytes, logBytes: 0)
        let replay = rebuild(snapshotBytes: 0, logBytes: logBytes)
        return read + replay > budget && (read < budget || replay >= read)
    }
}

extension Duration {
    /// This duration in nanoseconds.
    var nanoseconds: Double {
        Double(components.seconds) * 1e9 + Double(components.attoseconds) / 1e9
    }
}
