import Foundation

/// The compaction engine: pre-combined runs of the history, so the one
/// transaction that takes the value after `a` to the value after `b` is
/// flattened from O(log n) pieces instead of `b - a` transactions.
///
/// Blocks are aligned: level `L` holds, for each `j`, the flatten of
/// transactions `j·S_L + 1 ... (j + 1)·S_L` with `S_L = 16^(L+1)` (16, 256,
/// 4,096, 65,536). A run is covered greedily by the largest aligned block
/// that fits, so it takes at most 15 pieces per level at each end. Blocks
/// are built the first time a run needs them (a level-`L` block from 16
/// level-`L-1` blocks) and kept; flatten's associativity makes any mix of
/// blocks and raw transactions combine to the flatten of the raw run.
///
/// Blocks keep changes only: each transaction's own record (ID, message,
/// metadata) stays in the history, so compaction loses none of it.
struct RunIndex {
    static let fanout: Int64 = 16
    static let levels = 4
    /// Blocks of this level and above (256+ transactions) are also written
    /// to block files, so a store just opened finds them without reading
    /// the log; smaller ones are quicker to build than to look for.
    static let persistedLevel = 1

    /// Where a run's transactions and block files come from.
    struct Source {
        /// A run of the history, oldest first.
        var transactions: (ClosedRange<Int64>) throws -> [Transaction]
        /// The ID of transaction `t`: a block file must name it for its last.
        var id: (Int64) -> UUID
    }

    /// `blocks[L][j]`, when built or loaded.
    private(set) var blocks: [[Int64: Transaction]] = Array(repeating: [:], count: levels)
    /// Blocks in memory, oldest kept first: evicted in this order past the limit.
    private var order: [(level: Int, index: Int64)] = []
    private var orderHead = 0
    /// `bytes[L][j]`: the estimated bytes of `blocks[L][j]`.
    private var blockBytes: [[Int64: Int]] = Array(repeating: [:], count: levels)
    /// Changes held by all blocks together.
    private(set) var changeCount = 0
    /// Estimated bytes held by all blocks together (``Transaction/_estimatedBytes``).
    private(set) var bytes = 0
    /// At most this many changes stay in memory.
    let changeLimit: Int
    /// At most about this many bytes stay in memory: the memory budget's
    /// part, set as the current value grows or shrinks (``setByteLimit(_:)``).
    private(set) var byteLimit = Int.max
    /// The block files, when blocks are persisted.
    let files: BlockFiles?
    /// Bumped by every cut of the history (``removeAll(after:)``): a block
    /// built off the store's actor from a history of another generation is
    /// not installed.
    private(set) var generation = 0

    init(changeLimit: Int = .max, files: BlockFiles? = nil) {
        self.changeLimit = max(0, changeLimit)
        self.files = files
    }

    static func blockSize(_ level: Int) -> Int64 {
        var size: Int64 = fanout
        for _ in 0..<level { size *= fanout }
        return size
    }

    /// One piece of a run: an aligned block, or a single raw transaction.
    enum Piece: Equatable {
        case block(level: Int, index: Int64)
        case transaction(Int64)
    }

    /// The pieces covering transactions `a + 1 ... b`, in order. O(log(b - a)) pieces.
    static func pieces(from a: Int64, to b: Int64) -> [Piece] {
        var pieces: [Piece] = []
        var position = a
        while position < b {
            var used = false
            for level in stride(from: levels - 1, through: 0, by: -1) {
                let size = blockSize(level)
                if position % size == 0 && position + size <= b {
                    pieces.append(.block(level: level, index: position / size))
                    position += size
                    used = true
                    break
                }
            }
            if !used {
                position += 1
                pieces.append(.transaction(position))
            }
        }
        return pieces
    }

    /// The flatten of transactions `a + 1 ... b` (nil when `a == b`),
    /// built from blocks, loading or building and keeping the missing ones
    /// from `source`.
    mutating func combined(from a: Int64, to b: Int64, source: Source) throws -> Transaction? {
        guard a < b else { return nil }
        var parts: [Transaction] = []
        var rawRun: ClosedRange<Int64>?
        for piece in Self.pieces(from: a, to: b) {
            switch piece {
            case .transaction(let t):
                rawRun = rawRun.map { $0.lowerBound...t } ?? t...t
            case .block(let level, let index):
                if let run = rawRun {
                    parts += try source.transactions(run)
                    rawRun = nil
                }
                parts.append(try block(level: level, index: index, source: source))
            }
        }
        if let run = rawRun { parts += try source.transactions(run) }
        return try flatten(parts)
    }

    /// Block `index` of `level`: in memory, else from its file, else built
    /// from the level below (or the transactions) and written.
    mutating func block(level: Int, index: Int64, source: Source) throws -> Transaction {
        if let built = blocks[level][index] { return built }
        let size = Self.blockSize(level)
        let (first, last) = (index * size + 1, (index + 1) * size)
        let persisted = level >= Self.persistedLevel ? files : nil
        if let persisted, let loaded = persisted.read(level: level, first: first, last: last, lastID: source.id(last)) {
            keep(loaded, level: level, index: index)
            return loaded
        }
        let children: [Transaction]
        if level == 0 {
            children = try source.transactions(first...last)
        } else {
            children = try (0..<Self.fanout).map { child in
                try block(level: level - 1, index: index * Self.fanout + child, source: source)
            }
        }
        var built = try flatten(children)
        built.covers = []
        built.message = "transactions \(first)...\(last)"
        keep(built, level: level, index: index)
        persisted?.write(built, level: level, first: first, last: last, lastID: source.id(last))
        return built
    }

    /// Blocks evicted since the last ``takeEvicted()``.
    private var evicted: [Transaction] = []

    /// The blocks evicted since the last call, for the caller to let go of
    /// off the actor (freeing a large block takes milliseconds).
    mutating func takeEvicted() -> [Transaction] {
        defer { evicted = [] }
        return evicted
    }

    /// Keeps a block in memory, evicting the oldest kept past the limits
    /// (held for ``takeEvicted()``); `bytes` when already estimated. A
    /// block larger than the byte limit alone is used but not kept.
    mutating func keep(_ block: Transaction, level: Int, index: Int64, bytes: Int? = nil) {
        let size = bytes ?? block._estimatedBytes
        guard size <= byteLimit else {
            evicted.append(block)
            return
        }
        blocks[level][index] = block
        blockBytes[level][index] = size
        changeCount += block.changeCount
        self.bytes += size
        order.append((level, index))
        evictWhileOverLimits()
    }

    /// Changes the byte limit, evicting the oldest blocks past a lower one.
    mutating func setByteLimit(_ limit: Int) {
        byteLimit = max(0, limit)
        evictWhileOverLimits()
    }

    private mutating func evictWhileOverLimits() {
        while changeCount > changeLimit || bytes > byteLimit, orderHead < order.count {
            let (oldLevel, oldIndex) = order[orderHead]
            orderHead += 1
            if let old = blocks[oldLevel].removeValue(forKey: oldIndex) {
                changeCount -= old.changeCount
                bytes -= blockBytes[oldLevel].removeValue(forKey: oldIndex) ?? 0
                evicted.append(old)
            }
        }
        if orderHead > 1_024 && orderHead * 2 > order.count {
            order.removeFirst(orderHead)
            orderHead = 0
        }
    }

    /// Forgets every block that reaches past transaction `t` (the history
    /// after it was cut or rolled back).
    mutating func removeAll(after t: Int64) {
        generation += 1
        for level in 0..<Self.levels {
            let size = Self.blockSize(level)
            for (index, block) in blocks[level] where (index + 1) * size > t {
                blocks[level][index] = nil
                changeCount -= block.changeCount
                bytes -= blockBytes[level].removeValue(forKey: index) ?? 0
            }
        }
        files?.removeAll(after: t, blockSize: Self.blockSize)
    }

    /// Every built block.
    var builtBlocks: [Transaction] { blocks.flatMap(\.values) }
}
