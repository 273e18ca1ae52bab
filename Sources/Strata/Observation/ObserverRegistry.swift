/// The store's observers, indexed by what each read last time, so that a
/// commit finds the ones it may affect from its own changes: per changed
/// table, the observers of the whole table; per changed record, the
/// observers of that record; per changed record and observed index, the
/// observers whose ranges hold the record's entry before or after.
///
/// Selection is O(changes · (1 + observed indexes of the changed tables))
/// hash lookups and range searches, whatever the number of observers
/// (an index declared or dropped is the exception: it selects every
/// observer of its table, O(observers)).
///
/// Unchecked `Sendable`: the store's actor alone holds and uses it, and
/// its nonisolated `deinit` ends the observations once nothing else can
/// reach the store.
struct ObserverRegistry: @unchecked Sendable {
    private(set) var observers: [Int: any ObserverRunning] = [:]
    private var reads: [Int: ReadSet] = [:]
    private var everything: Set<Int> = []
    private var tables: [Key: Set<Int>] = [:]
    private var records: [ReadSet.RecordRead: Set<Int>] = [:]
    /// Table → index → readers of its ranges.
    private var ranges: [Key: [Key: RangeReaders]] = [:]
    private var nextID = 0

    var isEmpty: Bool { observers.isEmpty }
    var count: Int { observers.count }

    /// Registers `observer`, reading nothing yet; returns its number.
    mutating func add(_ observer: any ObserverRunning) -> Int {
        nextID += 1
        observers[nextID] = observer
        reads[nextID] = ReadSet()
        return nextID
    }

    /// Forgets observer `id` and what it read. Returns it, if it was here.
    @discardableResult
    mutating func remove(_ id: Int) -> (any ObserverRunning)? {
        guard let observer = observers.removeValue(forKey: id) else { return nil }
        unindex(id)
        reads[id] = nil
        return observer
    }

    /// Records what observer `id` read on its latest run.
    mutating func setReads(_ new: ReadSet, of id: Int) {
        guard observers[id] != nil, reads[id] != new else { return }
        unindex(id)
        reads[id] = new
        if new.everything { everything.insert(id) }
        for table in new.tables { tables[table, default: []].insert(id) }
        for record in new.records { records[record, default: []].insert(id) }
        for read in new.ranges {
            ranges[read.table, default: [:]][read.index, default: RangeReaders()].insert(read.range, of: id)
        }
    }

    private mutating func unindex(_ id: Int) {
        guard let old = reads[id] else { return }
        if old.everything { everything.remove(id) }
        for table in old.tables {
            tables[table]?.remove(id)
            if tables[table]?.isEmpty == true { tables[table] = nil }
        }
        for record in old.records {
            records[record]?.remove(id)
            if records[record]?.isEmpty == true { records[record] = nil }
        }
        for read in old.ranges {
            ranges[read.table]?[read.index]?.remove(read.range, of: id)
            if ranges[read.table]?[read.index]?.isEmpty == true { ranges[read.table]?[read.index] = nil }
            if ranges[read.table]?.isEmpty == true { ranges[read.table] = nil }
        }
        reads[id] = ReadSet()
    }

    /// The observers whose result the commit from `before` to `after` by
    /// `transaction` may have changed, in registration order.
    mutating func affected(by transaction: Transaction, from before: Database, to after: Database) -> [Int] {
        var found = everything
        for table in transaction.indexChanges.keys {
            // The plan of a query may change: every reader of the table.
            for (id, read) in reads where read.tablesTouched.contains(table) { found.insert(id) }
        }
        for (table, changes) in transaction.changes {
            if let readers = tables[table] { found.formUnion(readers) }
            if !records.isEmpty {
                for (id, _) in changes {
                    if let readers = records[ReadSet.RecordRead(table: table, id: id)] { found.formUnion(readers) }
                }
            }
            guard let observed = ranges[table] else { continue }
            for (index, var readers) in observed {
                let definition =
                    after._tables[table]?.indexes.first { $0.definition.name == index }?.definition
                    ?? before._tables[table]?.indexes.first { $0.definition.name == index }?.definition
                guard let definition else {
                    found.formUnion(readers.allObservers)
                    continue
                }
                for (id, _) in changes {
                    let old = before._tables[table]?[id].map { definition.entry(for: $0, id: id) }
                    let new = after._tables[table]?[id].map { definition.entry(for: $0, id: id) }
                    if let old { readers.observers(containing: old, into: &found) }
                    if let new, new != old { readers.observers(containing: new, into: &found) }
                }
                // Keeps the order the lookups built.
                ranges[table]?[index] = readers
            }
        }
        return found.sorted()
    }

    /// Every observer, in registration order.
    var all: [Int] { observers.keys.sorted() }
}

/// An observer the registry runs on a value: it evaluates, yields when
/// its result changed, and says what it read (nil: it has ended).
protocol ObserverRunning: AnyObject {
    func run(on database: Database) -> ReadSet?
    func finish()
}
