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

    /// `blocks[L][j]`, when built.
    private var blocks: [[Int64: Transaction]] = Array(repeating: [:], count: levels)
    /// Changes held by all blocks together (what they cost in memory).
    private(set) var changeCount = 0

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
    /// built from blocks, building and keeping the missing ones from
    /// `transactions` (which returns a run of the history, oldest first).
    mutating func combined(
        from a: Int64,
        to b: Int64,
        transactions: (ClosedRange<Int64>) throws -> [Transaction]
    ) throws -> Transaction? {
        guard a < b else { return nil }
        var parts: [Transaction] = []
        var rawRun: ClosedRange<Int64>?
        for piece in Self.pieces(from: a, to: b) {
            switch piece {
            case .transaction(let t):
                rawRun = rawRun.map { $0.lowerBound...t } ?? t...t
            case .block(let level, let index):
                if let run = rawRun {
                    parts += try transactions(run)
                    rawRun = nil
                }
                parts.append(try block(level: level, index: index, transactions: transactions))
            }
        }
        if let run = rawRun { parts += try transactions(run) }
        return try flatten(parts)
    }

    /// Block `index` of `level`, built (and kept) when missing.
    mutating func block(
        level: Int,
        index: Int64,
        transactions: (ClosedRange<Int64>) throws -> [Transaction]
    ) throws -> Transaction {
        if let built = blocks[level][index] { return built }
        let size = Self.blockSize(level)
        let children: [Transaction]
        if level == 0 {
            children = try transactions((index * size + 1)...((index + 1) * size))
        } else {
            children = try (0..<Self.fanout).map { child in
                try block(level: level - 1, index: index * Self.fanout + child, transactions: transactions)
            }
        }
        var built = try flatten(children)
        built.covers = []
        built.message = "transactions \(index * size + 1)...\((index + 1) * size)"
        blocks[level][index] = built
        changeCount += built.changeCount
        return built
    }

    /// Forgets every block that reaches past transaction `t` (the history
    /// after it was cut or rolled back).
    mutating func removeAll(after t: Int64) {
        for level in 0..<Self.levels {
            let size = Self.blockSize(level)
            for (index, block) in blocks[level] where (index + 1) * size > t {
                blocks[level][index] = nil
                changeCount -= block.changeCount
            }
        }
    }

    /// Every built block.
    var builtBlocks: [Transaction] { blocks.flatMap(\.values) }

    /// How many blocks are built, per level.
    var builtCounts: [Int] { blocks.map(\.count) }
}
