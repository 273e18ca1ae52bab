/// Past values kept alive as starting points for rebuilds. A checkpoint
/// costs only what differs from its neighbours: the maps share every node
/// that no transaction between them touched.
///
/// One is kept every `interval` transactions as the store passes them.
/// When more than `limit` are held, every other one goes and the interval
/// doubles, so they stay evenly spread over the whole history and their
/// number stays bounded.
struct Checkpoints {
    private(set) var interval: Int64
    let limit: Int
    /// By basis, ascending.
    private(set) var values: [Database] = []

    init(interval: Int, limit: Int) {
        self.interval = Int64(max(1, interval))
        self.limit = max(0, limit)
    }

    /// Keeps `value` when its basis falls on the interval.
    mutating func consider(_ value: Database) {
        guard limit > 0, value.basis > 0, value.basis % interval == 0 else { return }
        if let last = values.last, last.basis >= value.basis { return }
        values.append(value)
        if values.count > limit {
            interval *= 2
            values.removeAll { $0.basis % interval != 0 }
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
        values.removeAll { $0.basis > t }
    }
}
