import PersistentCollections

extension Query {
    /// A result: the record and its ID.
    public typealias Row = (id: RecordID, record: Record)

    /// The matching records in order. O(log n + results) on an index
    /// without filters (each record is one map lookup); a scan is O(n log n).
    /// - Throws: ``QueryError``.
    public func records() throws -> [Row] {
        try rows(limit: limitCount)
    }

    /// The IDs of the matching records in order (no record is read on an
    /// index without filters).
    public func ids() throws -> [RecordID] {
        switch try plan() {
        case .index(let index, let descending, _) where filters.isEmpty:
            return windowIDs(index, descending: descending, limit: limitCount)
        default:
            return try records().map(\.id)
        }
    }

    /// The number of matching records (after `offset`, at most `limit`).
    /// O(log n) on an index without filters.
    public func count() throws -> Int {
        switch try plan() {
        case .index(let index, _, _) where filters.isEmpty:
            guard let total = offsets(in: index)?.count else { return 0 }
            let afterOffset = Swift.max(0, total - offsetCount)
            return limitCount.map { Swift.min($0, afterOffset) } ?? afterOffset
        default:
            return try records().count
        }
    }

    /// The first result, or nil (nil under `limit(0)`). O(log n) on an
    /// index without filters.
    public func first() throws -> Row? {
        try rows(limit: Swift.min(limitCount ?? 1, 1)).first
    }

    /// The last result (of the window `limit`/`offset` select), or nil.
    public func last() throws -> Row? {
        switch try plan() {
        case .index(let index, let descending, let table) where filters.isEmpty:
            guard let entries = window(index, descending: descending, limit: limitCount) else { return nil }
            // The window's last entry, reached from the other end.
            var fromEnd = entries.reversed().makeIterator()
            guard let entry = fromEnd.next() else { return nil }
            return row(entry, index: index, in: table)
        default:
            return try records().last
        }
    }

    // MARK: Running

    func rows(limit: Int?) throws -> [Row] {
        switch try plan() {
        case .index(let index, let descending, let records):
            if filters.isEmpty {
                let ids = windowIDs(index, descending: descending, limit: limit)
                // One batch: the lookups' memory reads overlap.
                var rows: [Row] = []
                rows.reserveCapacity(ids.count)
                records.records.forEachValue(forKeys: ids) { position, record in
                    rows.append((ids[position], copy record))
                }
                return rows
            }
            guard let offsets = offsets(in: index) else { return [] }
            var result: [Row] = []
            var skipped = 0
            let entries = index.entries.elements(atOffsets: offsets)
            for entry in descending ? entries.reversed() : entries {
                if let limit, result.count >= limit { break }
                guard let found = row(entry, index: index, in: records), included(found.record) else { continue }
                if skipped < offsetCount {
                    skipped += 1
                    continue
                }
                result.append(found)
            }
            return result
        case .scan:
            return scan(limit: limit)
        }
    }

    /// The entries between the bounds, after `offset`, at most `limit`,
    /// in the query's order: a view of the index, nothing copied.
    func window(_ index: TableIndex, descending: Bool, limit: Int?) -> PersistentSortedSet<IndexEntry>.Elements? {
        guard let bounds = bounds(for: index) else { return nil }
        return window(index, bounds: bounds, descending: descending, limit: limit)
    }

    /// The same between `bounds`, computed once by the caller.
    func window(
        _ index: TableIndex,
        bounds: EntryBounds,
        descending: Bool,
        limit: Int?
    ) -> PersistentSortedSet<IndexEntry>.Elements? {
        let offsets = offsets(in: index, bounds: bounds)
        let (low, high) = (offsets.lowerBound, offsets.upperBound)
        let available = Swift.max(0, high - low - offsetCount)
        let count = limit.map { Swift.min($0, available) } ?? available
        guard count > 0 else { return nil }
        let start = descending ? high - offsetCount - count : low + offsetCount
        let entries = index.entries.elements(atOffsets: start..<(start + count))
        return descending ? entries.reversed() : entries
    }

    /// The record IDs of ``window(_:descending:limit:)``'s entries.
    func windowIDs(_ index: TableIndex, descending: Bool, limit: Int?) -> [RecordID] {
        guard let bounds = bounds(for: index),
            let entries = window(index, bounds: bounds, descending: descending, limit: limit)
        else { return [] }
        // Every entry of the window starts with the equalities' bytes.
        let prefix = bounds.prefix
        let after = index.definition.fields.count - bounds.prefixValues
        var ids: [RecordID] = []
        ids.reserveCapacity(entries.count)
        // Leaf by leaf, in place: the view's iterator keeps a path of
        // retained nodes in an array and copies each entry out.
        index.entries.forEachChunk(inOffsets: entries.offsets, descending: descending) { chunk in
            if descending {
                for entry in chunk.reversed() { ids.append(entry.recordID(afterPrefix: prefix, values: after)) }
            } else {
                for entry in chunk { ids.append(entry.recordID(afterPrefix: prefix, values: after)) }
            }
            return true
        }
        return ids
    }

    /// The row of `entry`, an entry of `index` of `records`.
    func row(_ entry: IndexEntry, index: TableIndex, in records: Table) -> Row? {
        let id = entry.recordID(after: index.definition.fields.count)
        guard let record = records[id] else { return nil }
        return (id, record)
    }

    func included(_ record: Record) -> Bool {
        filters.allSatisfy { $0(record) }
    }

    /// The offsets in `index` of the entries the conditions select; nil
    /// when they select nothing on any value.
    func offsets(in index: TableIndex) -> Swift.Range<Int>? {
        guard let bounds = bounds(for: index) else { return nil }
        return offsets(in: index, bounds: bounds)
    }

    func offsets(in index: TableIndex, bounds: EntryBounds) -> Swift.Range<Int> {
        bounds.lower < bounds.upper ? index.entries.offsets(in: bounds.lower..<bounds.upper) : 0..<0
    }

    /// Where the entries a query selects lie: in `lower..<upper`. Both
    /// bounds start with `prefix` bytes, which encode the first
    /// `prefixValues` values of the index (the equalities), and so does
    /// every entry between them. (A tuple: a struct of two entries was
    /// copied and destroyed through its value witnesses, ~200 instructions
    /// a query.)
    typealias EntryBounds = (lower: IndexEntry, upper: IndexEntry, prefix: Int, prefixValues: Int)

    /// The bounds of the entries of `index` the conditions select; nil
    /// when two equalities on one path contradict each other.
    func bounds(for index: TableIndex) -> EntryBounds? {
        // Equalities in the index's field order; two different values for
        // one path select nothing. One buffer, cut back to the shared
        // prefix between the bounds: no copy of it per bound.
        var writer = IndexEntryWriter(capacity: 64)
        let fields = index.definition.fields
        // The index `resolve()` chose has a field per equality path.
        let prefixValues = Swift.min(equalPathCount, fields.count)
        for i in 0..<prefixValues {
            var found: Int?
            for e in equalities.indices where equalities[e].path == fields[i] {
                // Compared as index entries, as a scan compares them (the
                // encoding is bit-exact, as `Value`'s `==` is).
                if let found, Self.encoded(equalities[found].value) != Self.encoded(equalities[e].value) {
                    return nil
                }
                found = found ?? e
            }
            writer.value(found.map { equalities[$0].value })
        }
        let prefix = writer.bytes.count
        guard let range else {
            let lower = IndexEntry(writer.bytes)
            writer.bytes.append(0xFF)
            return (lower, IndexEntry(writer.bytes), prefix, prefixValues)
        }
        // A one-sided range stays within its bound's kind: nulls and
        // other kinds are never in `...5`.
        let kind = range.lower?.value ?? range.upper!.value
        if let bound = range.lower {
            writer.value(bound.value)
            if !bound.inclusive { writer.bytes.append(0xFF) }
        } else {
            writer.bytes.append(kind.indexKindStart)
        }
        let lower = IndexEntry(writer.bytes)
        writer.bytes.removeSubrange(prefix...)
        if let bound = range.upper {
            writer.value(bound.value)
            if bound.inclusive { writer.bytes.append(0xFF) }
        } else {
            writer.bytes.append(kind.indexKindEnd)
        }
        return (lower, IndexEntry(writer.bytes), prefix, prefixValues)
    }

    /// The equality conditions by path; nil when one path must equal two
    /// different values.
    func equalValues() -> [FieldPath: Value]? {
        var equal: [FieldPath: Value] = [:]
        for equality in equalities {
            let value = equality.value
            // Compared as index entries: the same equality as an index's.
            if let existing = equal.updateValue(value, forKey: equality.path),
                Self.encoded(existing) != Self.encoded(value)
            {
                return nil
            }
        }
        return equal
    }

    static func encoded(_ value: Value) -> [UInt8] {
        var writer = IndexEntryWriter()
        writer.value(value)
        return writer.bytes
    }

    // MARK: Scanning

    /// Every record of the table checked against every condition, sorted
    /// by the order (then ID), or by ID.
    func scan(limit: Int?) -> [Row] {
        guard let table = database._tables[table], let equal = equalValues() else { return [] }
        var matches: [(key: [UInt8], row: Row)] = []
        // The range's bounds, encoded once for every record.
        let bounds = range.map { range -> (path: FieldPath, lower: [UInt8], upper: [UInt8]) in
            let kind = range.lower?.value ?? range.upper!.value
            let lower =
                range.lower.map { Self.encoded($0.value) + ($0.inclusive ? [] : [0xFF]) } ?? [kind.indexKindStart]
            let upper =
                range.upper.map { Self.encoded($0.value) + ($0.inclusive ? [0xFF] : []) } ?? [kind.indexKindEnd]
            return (range.path, lower, upper)
        }
        for (id, record) in table.records {
            guard equal.allSatisfy({ (record[path: $0.key] ?? .null) == $0.value }) else { continue }
            if let bounds {
                let value = Self.encoded(record[path: bounds.path] ?? .null)
                guard !value.lexicographicallyPrecedes(bounds.lower), value.lexicographicallyPrecedes(bounds.upper)
                else { continue }
            }
            guard included(record) else { continue }
            var writer = IndexEntryWriter()
            if let ordering { writer.value(record[path: ordering.path]) }
            writer.recordID(id)
            matches.append((writer.bytes, (id, record)))
        }
        matches.sort { $0.key.lexicographicallyPrecedes($1.key) }
        let descending = (ordering?.descending ?? false) != isReversed
        if descending { matches.reverse() }
        let afterOffset = matches.dropFirst(offsetCount)
        return (limit.map { Array(afterOffset.prefix($0)) } ?? Array(afterOffset)).map(\.row)
    }
}

extension Value {
    /// The smallest encoding of this value's kind (a one-sided range's
    /// open end): its type byte.
    var indexKindStart: UInt8 {
        switch self {
        case .null: return _IndexTag.null
        case .bool: return _IndexTag.false
        case .int: return 0x0C
        case .double: return _IndexTag.double
        case .string: return _IndexTag.string
        case .bytes: return _IndexTag.bytes
        case .date: return _IndexTag.date
        case .reference: return _IndexTag.reference
        case .list: return _IndexTag.list
        case .map: return _IndexTag.map
        }
    }

    /// Above every encoding of this value's kind: the next type byte.
    var indexKindEnd: UInt8 {
        switch self {
        case .null: return _IndexTag.null + 1
        case .bool: return _IndexTag.true + 1
        case .int: return 0x1D
        case .double: return _IndexTag.double + 1
        case .string: return _IndexTag.string + 1
        case .bytes: return _IndexTag.bytes + 1
        case .date: return _IndexTag.date + 1
        case .reference: return _IndexTag.reference + 1
        case .list: return _IndexTag.list + 1
        case .map: return _IndexTag.map + 1
        }
    }
}
