import PersistentCollections

/// Past values kept alive as starting points for rebuilds. A checkpoint
/// costs only what differs from its neighbours: the maps share every node
/// that no transaction between them touched.
///
/// One is kept every `interval` transactions as the store passes them.
/// When more than `limit` are held, or their trie nodes not shared with the
/// next one add up to more than `byteLimit`, every other one goes and the
/// interval doubles, so they stay evenly spread over the whole history and
/// both their number and their memory stay bounded.
struct Checkpoints {
    private(set) var interval: Int64
    let limit: Int
    let byteLimit: Int
    /// By basis, ascending.
    private(set) var values: [Database] = []
    /// `costs[i]`: trie bytes of `values[i]` not shared with `values[i + 1]`
    /// (the newest: 0 until the next one comes).
    private var costs: [Int] = []
    /// The sum of `costs`.
    private(set) var bytes = 0

    init(interval: Int, limit: Int, byteLimit: Int = .max) {
        self.interval = Int64(max(1, interval))
        self.limit = max(0, limit)
        self.byteLimit = max(0, byteLimit)
    }

    /// Keeps `value` when its basis falls on the interval.
    mutating func consider(_ value: Database) {
        guard limit > 0, value.basis > 0, value.basis % interval == 0 else { return }
        if let last = values.last {
            guard last.basis < value.basis else { return }
            costs[costs.count - 1] = last.nodeBytes(notSharedWith: value)
            bytes += costs[costs.count - 1]
        }
        values.append(value)
        costs.append(0)
        while values.count > 1 && (values.count > limit || bytes > byteLimit) {
            interval *= 2
            values.removeAll { $0.basis % interval != 0 }
            costs = values.indices.map { i in
                i + 1 < values.count ? values[i].nodeBytes(notSharedWith: values[i + 1]) : 0
            }
            bytes = costs.reduce(0, +)
        }
    }

    /// The kept values nearest to `t` from below and from above.
    func neighbours(of t: Int64) -> (below: Database?, above: Database?) {
        var low = 0
        var high = values.count
        while low < high {
            let middle = (low + high) / 2
            if values[middle].basis <= t { low = middle + 1 } else { high = middle }
        }
        return (low > 0 ? values[low - 1] : nil, low < values.count ? values[low] : nil)
    }

    /// Forgets every checkpoint after `t`.
    mutating func removeAll(after t: Int64) {
        let keep = values.firstIndex { $0.basis > t } ?? values.count
        values.removeSubrange(keep...)
        costs.removeSubrange(keep...)
        if !costs.isEmpty { costs[costs.count - 1] = 0 }
        bytes = costs.reduce(0, +)
    }
}

extension Database {
    /// Bytes of this value's trie nodes (tables and records) that `other`
    /// does not share. O(changes between them · depth).
    func nodeBytes(notSharedWith other: Database) -> Int {
        var bytes = tables.nodeBytes(notSharedWith: other.tables)
        for (name, table) in tables {
            bytes += table.records.nodeBytes(notSharedWith: other.tables[name]?.records ?? PersistentMap())
        }
        return bytes
    }
}
