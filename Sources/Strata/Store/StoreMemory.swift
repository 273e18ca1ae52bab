import PersistentCollections

/// What a store holds in memory, in bytes, each allocation counted once:
/// values share every trie node and record no change touched, so a past
/// value costs only what differs from the values counted before it.
///
/// Counted in this order: the current value, the checkpoints newest first,
/// the decoded transactions cached, the compaction blocks. Each part's
/// `Footprint.unique` bytes are what it adds; its `Footprint.shared`
/// bytes are held by a part counted earlier. Sizes are requested bytes
/// (nodes, record buffers and their headers); the allocator's rounding and
/// the store's fixed structures are not included.
public struct StoreMemory: Hashable, Sendable {
    /// The current value: trie nodes and record storage.
    public var currentValue: Int
    /// The past values kept as rebuild starts.
    public var checkpoints: Footprint
    /// How many checkpoints there are.
    public var checkpointCount: Int
    /// The decoded transactions kept to spare reading the log.
    public var cachedTransactions: Footprint
    /// The pre-combined runs of the compaction engine.
    public var compactionBlocks: Footprint

    /// What the rebuild engine holds beside the current value: the
    /// checkpoints', cached transactions' and blocks' unique bytes (what
    /// ``StoreOptions/memoryBudget`` bounds).
    public var engine: Int { checkpoints.unique + cachedTransactions.unique + compactionBlocks.unique }

    /// Everything above, each allocation once.
    public var total: Int {
        currentValue + checkpoints.unique + cachedTransactions.unique + compactionBlocks.unique
    }

    init(current: Database, checkpoints: [Database], cached: [Transaction], blocks: [Transaction]) {
        let counter = FootprintCounter()
        currentValue = current.footprint(in: counter).unique
        self.checkpoints = checkpoints.reversed().reduce(Footprint()) { $0 + $1.footprint(in: counter) }
        checkpointCount = checkpoints.count
        cachedTransactions = cached.reduce(Footprint()) { $0 + $1.footprint(in: counter) }
        compactionBlocks = blocks.reduce(Footprint()) { $0 + $1.footprint(in: counter) }
    }
}

extension Database {
    /// This value's trie nodes and record storage, counted in `counter`.
    func footprint(in counter: FootprintCounter) -> Footprint {
        tables.footprint(in: counter) { _, table in
            table.records.footprint(in: counter) { _, record in counter.countArray(record._bytes) }
        }
    }
}

extension Transaction {
    /// This transaction's change maps and the records they carry. A
    /// field-level update's dictionary and values are estimated.
    func footprint(in counter: FootprintCounter) -> Footprint {
        changes.footprint(in: counter) { _, table in
            table.footprint(in: counter) { _, change in
                switch change {
                case .insert(let record), .delete(let record): return counter.countArray(record._bytes)
                case .update(let fields):
                    return Footprint(unique: Transaction._updateBytes(fields))
                }
            }
        }
    }
}
