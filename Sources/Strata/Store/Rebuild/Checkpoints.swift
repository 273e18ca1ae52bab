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
///
/// What a checkpoint costs beside the next one is measured on the caller's
/// side when few changes lie between them (microseconds), and off the
/// store's actor otherwise (comparing two values around a large import
/// walks every node it changed, milliseconds the commit that reaches the
/// checkpoint would wait): the store hands ``pendingMeasurements`` to a
/// thread and returns the figures to ``measured(_:generation:)``, which
/// thins when they exceed the limit. Until then the byte limit counts what
/// is measured.
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
    /// What a change has cost a checkpoint, as measured (a moving average;
    /// a path copy and an old record on the development VM to start).
    private var bytesPerChange = 1_024.0
    /// The byte limit at the last thinning: the interval relaxes only once
    /// the limit has grown well past it (else it would thin and relax in turn).
    private var thinnedAtLimit = 0
    /// The newest's cost is measured again once the changes since it reach
    /// this many, then each time they double.
    static let newestFirstMeasured = 64

    /// A pair at most this many changes apart is measured at once.
    static let measuredInline = 8

    init(interval: Int, limit: Int, byteLimit: Int = .max) {
        self.interval = Int64(max(1, interval))
        self.baseInterval = self.interval
        self.limit = max(0, limit)
        self.byteLimit = max(0, byteLimit)
    }

    /// Keeps `value` (after a transaction of `changeCount` changes) when its
    /// basis falls on the interval; its predecessor's cost is measured now
    /// when few changes lie between them, else left to measure. O(1) but
    /// when measuring or thinning (O(kept)).
    mutating func consider(_ value: Database, changeCount: Int) {
        guard limit > 0, byteLimit > 0, value.basis > 0 else { return }
        if !changes.isEmpty { changes[changes.count - 1] += changeCount }
        relaxInterval()
        guard value.basis % interval == 0 else { return }
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
    /// both limits, every cost is measured, the byte limit has grown by
    /// half since the last thinning (the value grew), and it is above the
    /// one asked for: new checkpoints come denser. Thinning back (doubling)
    /// drops only those, the older ones lying on the coarser interval.
    private mutating func relaxInterval() {
        while interval > baseInterval && values.count < limit / 3 && unmeasured.isEmpty
            && (byteLimit == .max
                || (estimatedBytes < byteLimit / 3 && Double(byteLimit) >= Double(thinnedAtLimit) * 1.5))
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

    /// What the checkpoints hold as the byte limit counts it: the measured
    /// costs; each cost still to measure at its changes times the measured
    /// bytes per change (measurements run on a low-priority thread that a
    /// busy writer can starve: the limit must act without them); the
    /// newest at its last measured cost beside the current value or its
    /// changes since, whichever is more. O(costs waiting to be measured).
    var estimatedBytes: Int {
        guard let since = changes.last else { return 0 }
        let waiting = unmeasured.reduce(0) { $0 + changes[$1] }
        return bytes + Int(Double(waiting) * bytesPerChange) + max(newestCost, Int(Double(since) * bytesPerChange))
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
                if changes[index] > 0 { bytesPerChange += (Double(cost) / Double(changes[index]) - bytesPerChange) / 4 }
            }
        }
        let done = Set(results.filter { !$0.againstCurrent }.map(\.index))
        unmeasured.removeAll { done.contains($0) }
        thinWhileOverLimits()
    }

    /// Every other value goes while more than `limit` are kept or their
    /// ``estimatedBytes`` exceed `byteLimit`, down to none (a lone value
    /// costing more than the limit goes too). O(kept).
    ///
    /// A kept value's cost beside its new neighbour is measured as in
    /// ``consider(_:changeCount:)``; until then it counts what it cost beside
    /// the old one, a lower bound (a node the old neighbour no longer shared,
    /// the next one does not share either: nodes never come back), so the
    /// byte limit keeps acting.
    private mutating func thinWhileOverLimits() {
        while !values.isEmpty && (values.count > limit || estimatedBytes > byteLimit || byteLimit == 0) {
            interval *= 2
            thinnedAtLimit = byteLimit
            let newest = values[values.count - 1].basis
            var keptValues: [Database] = []
            var keptCosts: [Int] = []
            var keptChanges: [Int] = []
            for (value, (cost, changed)) in zip(values, zip(costs, changes)) {
                if value.basis % interval == 0 {
                    keptValues.append(value)
                    keptCosts.append(cost)
                    keptChanges.append(changed)
                } else {
                    dropped.append(value)
                    if !keptChanges.isEmpty { keptChanges[keptChanges.count - 1] += changed }
                }
            }
            if let last = keptCosts.indices.last {
                // A newest that was not the newest before costs beside the
                // current value at least what it cost beside its neighbour.
                if keptValues[last].basis != newest {
                    newestCost = keptCosts[last]
                    newestMeasuredChanges = 0
                }
                keptCosts[last] = 0
            }
            values = keptValues
            costs = keptCosts
            changes = keptChanges
            bytes = costs.reduce(0, +)
            unmeasured = []
            generation += 1
            for index in values.indices.dropLast() { measureOrDefer(index, newer: values[index + 1]) }
        }
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
        unmeasured.removeAll { $0 + 1 >= values.count }
        bytes = costs.reduce(0, +)
        newestCost = 0
        newestMeasuredChanges = 0
        generation += 1
    }
}
