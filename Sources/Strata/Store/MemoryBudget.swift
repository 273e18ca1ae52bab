/// How much memory the rebuild engine may hold beside the current value:
/// the checkpoints (past values kept as rebuild starts), the compaction
/// engine's pre-combined blocks and the decoded transactions cached.
///
/// The budget follows the data: by default a fraction of the current
/// value's bytes, so a 10k-song library does not keep a 1M-song library's
/// engine memory, with a floor so that a small store still rebuilds from
/// nearby checkpoints. An absolute cap can be set instead or as well
/// (the smaller limit wins).
///
/// The store divides the budget: ``checkpointShare`` to checkpoints,
/// ``blockShare`` to blocks and the rest to cached transactions. Each part
/// counts its own unique bytes (nodes and records that the part holds and
/// the next-newer value does not), estimated as the parts change; the
/// oldest checkpoints, blocks and transactions are let go of (blocks and
/// transactions are read back from their files when needed) to stay
/// inside, so the checkpoints cover the most recent history. ``StoreStatistics`` reports the
/// budget and what is held against it.
public struct MemoryBudget: Sendable, Hashable {
    /// The budget as this fraction of the current value's bytes (nil: not
    /// proportional).
    public var fraction: Double?
    /// The budget in bytes (nil: no absolute cap).
    public var bytes: Int?
    /// A proportional budget is never below this many bytes.
    public var floor: Int

    /// A budget of `fraction` of the current value's bytes, at least
    /// `floor` bytes, at most `bytes` when given. Negative figures count as 0.
    public init(fraction: Double?, bytes: Int? = nil, floor: Int = 0) {
        self.fraction = fraction.map { $0.isNaN ? 0 : Swift.max(0, $0) }
        self.bytes = bytes.map { Swift.max(0, $0) }
        self.floor = Swift.max(0, floor)
    }

    /// The default: half the current value's bytes, at least 4 MiB. At 1M
    /// songs (about 650 MB in memory) that is about 320 MB for the engine.
    public static let proportional = MemoryBudget(fraction: 0.5, floor: 4 << 20)

    /// A budget of `fraction` of the current value's bytes, at least `floor`.
    public static func fraction(_ fraction: Double, floor: Int = 4 << 20) -> MemoryBudget {
        MemoryBudget(fraction: fraction, floor: floor)
    }

    /// A budget of `bytes` whatever the current value's size.
    public static func bytes(_ bytes: Int) -> MemoryBudget {
        MemoryBudget(fraction: nil, bytes: bytes)
    }

    /// No budget: the engine is bounded only by the count limits of
    /// ``StoreOptions``.
    public static let unlimited = MemoryBudget(fraction: nil)

    /// The budget in bytes for a current value of `valueBytes` bytes. O(1).
    public func limit(valueBytes: Int) -> Int {
        var limit = Int.max
        if let fraction {
            // The properties are public vars: a NaN or negative set after
            // init counts as 0 here too (and 0 · ∞ is no budget, not NaN).
            let share = fraction.isNaN ? 0 : Swift.max(0, fraction)
            let proportional = share == 0 ? 0 : (Double(Swift.max(0, valueBytes)) * share).rounded(.down)
            let bytes = proportional.isNaN ? 0 : (proportional >= Double(Int.max) ? Int.max : Int(proportional))
            limit = Swift.max(Swift.max(0, floor), bytes)
        }
        if let bytes { limit = Swift.min(limit, Swift.max(0, bytes)) }
        return limit
    }

    /// The checkpoints' part of the budget.
    public static let checkpointShare = 0.625
    /// The compaction blocks' part of the budget.
    public static let blockShare = 0.25
    /// The cached transactions' part: what is left.
    public static var cacheShare: Double { 1 - checkpointShare - blockShare }

    /// `share` of `limit`, kept at `Int.max` when unlimited.
    static func part(_ share: Double, of limit: Int) -> Int {
        limit == .max ? .max : Int((Double(limit) * share).rounded(.down))
    }
}
