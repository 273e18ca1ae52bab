import PersistentCollections

/// Past values kept alive as starting points for rebuilds. A checkpoint
/// costs only what differs from its neighbours: the maps share every node
/// that no transaction between them touched.
///
/// One is kept every `interval` transactions as the store passes them,
/// and also after any transaction that brings the changes since the newest
/// kept to ``changesPerTransaction`` times the interval: a run of large
/// imports (10k records each) is thousands of changes per transaction, and
/// rebuilding a t inside it from a checkpoint several imports away took
/// 100 ms at 1M records, where a run of single edits of the same length
/// takes well under one. When what they hold (trie nodes and records not
/// shared with the next one) exceeds `byteLimit`, the oldest go: they
/// cover the most recent history. When more than `limit` are held, every
/// other one goes and the interval doubles, so they stay evenly spread
/// (those kept for their changes stay while the changes before them still
/// reach the doubled mark).
///
/// What a checkpoint costs beside the next one is measured on the caller's
/// side when few changes lie between them (microseconds), and off the
/// store's actor otherwise (comparing two values around a large import
/// walks every node it changed, milliseconds the commit that reaches the
/// checkpoint would wait): the store hands ``takePendingMeasurements(current:)``
/// to a thread and returns the figures to ``measured(_:generation:)``.
/// Until then a cost counts its changes at the measured bytes per change,
/// and after thinning, a kept value's old cost (a lower bound).
struct Checkpoints {
    private(set) var interval: Int64
    /// The interval asked for: after thinning, the interval comes back
    /// toward it when the kept values hold well under the byte limit again
    /// (the limit grew with the current value).
    let baseInterval: Int64
    let limit: Int
    /// Set by the memory budget as the current value grows or shrinks
    /// (``setByteLimit(_:)``).
    private(set) var byteLimit: Int
    /// By basis, ascending.
    private(set) var values: [Database] = []
    /// `costs[i]`: trie bytes of `values[i]` not shared with `values[i + 1]`
    /// (the newest: 0; one not measured yet: a lower bound).
    private var costs: [Int] = []
    /// `changes[i]`: changes made by the transactions between `values[i]`
    /// and `values[i + 1]` (the newest: since it), what measuring costs.
    private var changes: [Int] = []
    /// Changes made since the value before `values[0]` (dropped, or the
    /// value the store opened with): up to `values[0]`, or while none is
    /// kept, up to the current value.
    private var changesBeforeFirst = 0
    /// Indices `i` whose cost against `values[i + 1]` is not measured yet.
    private var unmeasured: [Int] = []
    /// The sum of `costs`.
    private(set) var bytes = 0
    /// Bumped whenever values are removed (indices move): measurements of
    /// another generation are dropped.
    private(set) var generation = 0
    /// Values thinned away and not yet handed over by ``takeDropped()``.
    private var dropped: [Database] = []
    /// What the newest costs beside the current value, which keeps moving
    /// away from it: measured now and then off the actor (a lower bound).
    private var newestCost = 0
    /// `changes.last` when `newestCost` was last asked for.
    private var newestMeasuredChanges = 0
    /// The newest's cost is measured again once the changes since it reach
    /// this many, then each time they double.
    static let newestFirstMeasured = 64

    /// A pair at most this many changes apart is measured at once.
    static let measuredInline = 8

    /// Changes per transaction of interval after which a value is kept
    /// whatever its basis: at the default interval of 16, every 1,024
    /// changes (about 2 ms of applying at 1M records).
    static let changesPerTransaction = 64

    /// The changes since the newest kept value after which the next value
    /// is kept whatever its basis.
    var changeMark: Int {
        let (mark, overflow) = Int(interval).multipliedReportingOverflow(by: Self.changesPerTransaction)
        return overflow ? .max : mark
    }

    init(interval: Int, limit: Int, byteLimit: Int = .max) {
        self.interval = Int64(max(1, interval))
        self.baseInterval = self.interval
        self.limit = max(0, limit)
        self.byteLimit = max(0, byteLimit)
    }

    /// Keeps `value` (after a transaction of `changeCount` changes) when its
    /// basis falls on the interval or the changes since the newest kept
    /// reach ``changeMark``; its predecessor's cost is measured now when
    /// few changes lie between them, else left to measure. O(1) but when
    /// measuring or thinning (O(kept)).
    mutating func consider(_ value: Database, changeCount: Int) {
        guard limit > 0, byteLimit > 0, value.basis > 0 else { return }
        if changes.isEmpty { changesBeforeFirst += changeCount } else { changes[changes.count - 1] += changeCount }
        relaxInterval()
        guard value.basis % interval == 0 || (changes.last ?? changesBeforeFirst) >= changeMark else { return }
        if let last = values.last {
            guard last.basis < value.basis else { return }
            // Until measured beside the new one, the old newest counts what
            // it was last measured to cost beside the current value (a
            // lower bound: the new one lies between them).
            bytes += newestCost - costs[values.count - 1]
            costs[values.count - 1] = newestCost
            measureOrDefer(values.count - 1, newer: value)
        }
        values.append(value)
        costs.append(0)
        changes.append(0)
        newestCost = 0
        newestMeasuredChanges = 0
        thinWhileOverLimits()
    }

    /// Halves the interval while the kept values hold under a third of
    /// both limits, every cost is measured, and it is above the one asked
    /// for: new checkpoints come denser (the limit grew with the value,
    /// or thinning went past it). Thinning back (doubling) drops only
    /// those, the older ones lying on the coarser interval.
    private mutating func relaxInterval() {
        while interval > baseInterval && values.count < limit / 3 && unmeasured.isEmpty
            && (byteLimit == .max || estimatedBytes < byteLimit / 3)
        {
            interval /= 2
        }
    }

    /// Changes the byte limit, thinning at once when the checkpoints
    /// exceed a lower one. Costs are measured only under a limit: raising
    /// it from none measures the kept values' costs now (O(changes between
    /// them) each, the first time).
    mutating func setByteLimit(_ newLimit: Int) {
        let newLimit = max(0, newLimit)
        guard newLimit != byteLimit else { return }
        let measuring = byteLimit == .max && newLimit < .max
        byteLimit = newLimit
        if measuring {
            unmeasured = []
            for index in values.indices.dropLast() { measureOrDefer(index, newer: values[index + 1]) }
        }
        thinWhileOverLimits()
    }

    /// Measures the cost of `values[index]` beside `newer` when cheap, else
    /// queues it. Costs matter only against a byte limit.
    private mutating func measureOrDefer(_ index: Int, newer: Database) {
        guard byteLimit < .max else { return }
        if changes[index] <= Self.measuredInline {
            let cost = Self.cost(of: values[index], keptWith: newer)
            bytes += cost - costs[index]
            costs[index] = cost
        } else {
            unmeasured.append(index)
        }
    }

    /// Whether costs wait to be measured: one measurement runs at a time,
    /// taking every cost waiting when it starts, so at a fast pace they are
    /// measured a few at a time (the byte limit acts a few checkpoints late).
    var needsMeasuring: Bool { !unmeasured.isEmpty || newestDue }

    /// Whether the newest's cost beside the current value is to be
    /// measured: the changes since it reached the first mark or doubled.
    private var newestDue: Bool {
        guard byteLimit < .max, let since = changes.last else { return false }
        return since >= max(Self.newestFirstMeasured, 2 * newestMeasuredChanges)
    }

    /// What the checkpoints hold as the byte limit counts it: the costs
    /// (measured, or until then a lower bound) and the newest's last
    /// measured cost beside the current value. O(1).
    var estimatedBytes: Int {
        values.isEmpty ? 0 : bytes + newestCost
    }

    /// The values thinned away since the last call, for the caller to let
    /// go of off the actor (freeing the nodes only they held takes time).
    mutating func takeDropped() -> [Database] {
        defer { dropped = [] }
        return dropped
    }

    /// A cost to measure off the actor: `older` (at `index`) beside
    /// `newer`, the next kept value or, for the newest, the current value.
    struct Measurement: Sendable {
        var index: Int
        var older: Database
        var newer: Database
        var againstCurrent: Bool
    }

    /// The costs still to be measured, the newest's beside `current` when
    /// due (asking for it counts as measuring it, for when it is next due).
    mutating func takePendingMeasurements(current: Database) -> [Measurement] {
        var pending = unmeasured.map {
            Measurement(index: $0, older: values[$0], newer: values[$0 + 1], againstCurrent: false)
        }
        if newestDue, let newest = values.last {
            newestMeasuredChanges = changes[changes.count - 1]
            pending.append(
                Measurement(index: values.count - 1, older: newest, newer: current, againstCurrent: true)
            )
        }
        return pending
    }

    /// Records costs measured from ``takePendingMeasurements(current:)`` of
    /// `generation` (dropped when values were removed since; a newest's
    /// dropped when a newer one came since), then thins while over the limits.
    mutating func measured(
        _ results: [(index: Int, bytes: Int, againstCurrent: Bool)],
        generation measuredGeneration: Int
    ) {
        guard measuredGeneration == generation else { return }
        let pending = Set(unmeasured)
        for (index, cost, againstCurrent) in results {
            if againstCurrent {
                if index == values.count - 1 { newestCost = cost }
            } else if pending.contains(index) {
                bytes += cost - costs[index]
                costs[index] = cost
            }
        }
        let done = Set(results.filter { !$0.againstCurrent }.map(\.index))
        unmeasured.removeAll { done.contains($0) }
        thinWhileOverLimits()
    }

    /// The oldest value goes while their ``estimatedBytes`` exceed
    /// `byteLimit`, down to none (a lone value costing more than the limit
    /// goes too); then every other one goes (the interval doubling) while
    /// more than `limit` are kept. O(kept) per value gone.
    ///
    /// Why the oldest: what checkpoints hold is the paths and records that
    /// the changes between them replaced, whatever their spacing, so
    /// thinning them evenly frees little (measured: a dropped value's
    /// nodes pass to its older neighbour), while the oldest frees all it
    /// cost. Under a budget they cover the most recent history densely,
    /// where as-of is asked most (undo, the recent past); older t rebuild
    /// from snapshots and blocks.
    ///
    /// A kept value's cost beside its new neighbour is measured as in
    /// ``consider(_:changeCount:)``; until then it counts what it cost beside
    /// the old one, a lower bound (a node the old neighbour no longer shared,
    /// the next one does not share either: nodes never come back), so the
    /// byte limit keeps acting.
    private mutating func thinWhileOverLimits() {
        while !values.isEmpty && (estimatedBytes > byteLimit || byteLimit == 0) {
            remove(at: 0)
        }
        while values.count > limit {
            interval *= 2
            // Ends: the mark doubles with the interval, and the changes
            // between kept values are finite.
            var index = 0
            while index < values.count {
                let keptForChanges = (index == 0 ? changesBeforeFirst : changes[index - 1]) >= changeMark
                if values[index].basis % interval != 0 && !keptForChanges {
                    remove(at: index)
                } else {
                    index += 1
                }
            }
        }
    }

    /// Lets go of `values[index]`: its older neighbour now spans both gaps
    /// and keeps its old cost (a lower bound: what it held beside the one
    /// gone it still holds) until measured again. O(kept).
    private mutating func remove(at index: Int) {
        dropped.append(values.remove(at: index))
        let cost = costs.remove(at: index)
        let changed = changes.remove(at: index)
        bytes -= cost
        generation += 1
        if index > 0 {
            changes[index - 1] += changed
        } else if values.isEmpty {
            // Only what came after the value gone counts toward the next.
            changesBeforeFirst = changed
        } else {
            // The new first one lies after both gaps: a run of large
            // transactions at the start thins as one anywhere else does.
            changesBeforeFirst += changed
        }
        if index == values.count, index > 0 {
            // The newest went: its older neighbour is the newest now, and
            // costs beside the current value at least what it cost beside it.
            newestCost = costs[index - 1]
            bytes -= costs[index - 1]
            costs[index - 1] = 0
            newestMeasuredChanges = 0
        } else if values.isEmpty {
            newestCost = 0
            newestMeasuredChanges = 0
        }
        unmeasured = unmeasured.compactMap { $0 == index - 1 || $0 == index ? nil : ($0 > index ? $0 - 1 : $0) }
        if index > 0 && index < values.count { unmeasured.append(index - 1) }
    }

    /// The cost of keeping `older` beside `newer`: its trie nodes and
    /// record buffers that `newer` does not share. O(nodes changed between
    /// them · depth).
    static func cost(of older: Database, keptWith newer: Database) -> Int {
        older._bytes(notSharedWith: newer)
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
        guard keep < values.count else { return }
        values.removeSubrange(keep...)
        costs.removeSubrange(keep...)
        changes.removeSubrange(keep...)
        if !costs.isEmpty { costs[costs.count - 1] = 0 }
        // What the newest's gap held ran past t: from 0 again, so that the
        // next value kept for its changes is kept for changes after t.
        if !changes.isEmpty { changes[changes.count - 1] = 0 }
        if values.isEmpty { changesBeforeFirst = 0 }
        unmeasured.removeAll { $0 + 1 >= values.count }
        bytes = costs.reduce(0, +)
        newestCost = 0
        newestMeasuredChanges = 0
        generation += 1
    }
}
