/// The current value's size in bytes, measured now and then and scaled by
/// its record count in between: a walk of every record costs too much to
/// repeat at each commit (about 50 ms at 1M records) and open does not
/// wait for it.
struct ValueSize {
    /// Bytes and record count when last measured (records 0: never).
    var measuredBytes = 0
    var measuredRecords = 0
    /// Changes committed since (updates change sizes, not counts).
    var changesSince = 0

    /// What a record costs before any measurement: its buffer and its
    /// share of the trie, for records of a few fields.
    static let assumedBytesPerRecord = 256

    /// The estimated bytes of a value of `records` records. O(1).
    func estimate(records: Int) -> Int {
        guard measuredRecords > 0 else { return records * Self.assumedBytesPerRecord }
        return Int(Double(measuredBytes) / Double(measuredRecords) * Double(records))
    }

    /// Whether the value has changed enough since the last measurement to
    /// measure it again: grown or shrunk twofold (or from nothing), or
    /// changed in as many records as a quarter of it. A measurement's cost
    /// stays proportional to the changes that led to it.
    func needsMeasuring(records: Int) -> Bool {
        guard records > 0 else { return false }
        guard measuredRecords > 0 else { return true }
        return records > 2 * measuredRecords || records < measuredRecords / 2
            || changesSince >= max(measuredRecords / 4, 256)
    }
}

extension Store {
    /// The bytes ``StoreOptions/memoryBudget`` allows now. O(tables).
    var memoryBudgetBytes: Int {
        options.memoryBudget.limit(valueBytes: valueSize.estimate(records: current.recordCount))
    }

    /// What the engine holds against the budget, as it counts it: the
    /// checkpoints' measured costs (the newest at their average), the
    /// blocks' and cached transactions' estimates. O(1).
    var engineBytes: Int { checkpoints.estimatedBytes + runIndex.bytes + history.cachedBytes }

    /// Divides the budget for the current value's size among checkpoints,
    /// blocks and cached transactions, each letting go of what no longer
    /// fits (freed off the actor), and starts a measurement of the value
    /// when it grew or shrank twofold (or, `remeasuring`, whatever it did:
    /// a cut history). O(1) unless something goes.
    func applyMemoryBudget(remeasuring: Bool = false) {
        // Only a proportional budget depends on the value's size.
        if options.memoryBudget.fraction != nil,
            remeasuring || valueSize.needsMeasuring(records: current.recordCount)
        {
            measureValueSize()
        }
        let limit = memoryBudgetBytes
        guard limit != appliedMemoryBudget else { return }
        appliedMemoryBudget = limit
        checkpoints.setByteLimit(MemoryBudget.part(MemoryBudget.checkpointShare, of: limit))
        runIndex.setByteLimit(MemoryBudget.part(MemoryBudget.blockShare, of: limit))
        history.setCachedByteCapacity(MemoryBudget.part(MemoryBudget.cacheShare, of: limit))
        Self.releaseOffActor(runIndex.takeEvicted())
        Self.releaseOffActor(history.takeEvicted())
        measureCheckpoints()
    }

    /// Measures the current value's bytes on the upkeep thread; the budget
    /// follows when the figure returns.
    /// The job holds the store weakly, also during its walk, and reads the
    /// value when it starts: a store closed, or let go of, while the job
    /// waits or walks is not kept alive (nor its lock held) by it.
    private func measureValueSize() {
        guard !measuringValueSize, !closing else { return }
        measuringValueSize = true
        let changesBefore = valueSize.changesSince
        Self.measuringQueue.async { [weak self] in
            guard let value = self?.current else { return }
            // A closed or released store's walk of the whole value stops
            // early instead of using a core, and holding the value.
            let stopped = { [weak self] in self?.measurementsStopped.withLock { $0 } ?? true }
            guard let bytes = value._allocatedBytes(unless: stopped) else { return }
            let size = ValueSize(measuredBytes: bytes, measuredRecords: value.recordCount)
            Task { [weak self] in await self?.valueSizeMeasured(size, changesBefore: changesBefore) }
        }
    }

    /// Keeps the changes counted while the measurement ran (they may or
    /// may not be in the value measured: counted, to measure again sooner).
    /// Nothing once the store is closing.
    private func valueSizeMeasured(_ size: ValueSize, changesBefore: Int) {
        measuringValueSize = false
        guard !closing else { return }
        var size = size
        size.changesSince = max(0, valueSize.changesSince - changesBefore)
        valueSize = size
        applyMemoryBudget()
    }
}
