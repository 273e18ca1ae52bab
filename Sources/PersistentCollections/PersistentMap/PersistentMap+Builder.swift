extension PersistentMap {
    /// Accumulates entries into a map that no one else can see yet, so every
    /// insert mutates nodes in place (no path copies). `build()` hands the
    /// result over in O(1).
    ///
    ///     var builder = PersistentMap<Int, String>.Builder()
    ///     for song in songs { builder[song.id] = song.title }
    ///     let map = builder.build()
    ///
    /// For a sequence of distinct keys known up front,
    /// ``PersistentMap/init(uniqueKeysWithValues:)`` is faster still: it
    /// builds every node at its final size in one pass.
    @frozen
    public struct Builder {
        @usableFromInline var _map: PersistentMap

        /// An empty builder.
        @inlinable
        public init() {
            _map = PersistentMap()
        }

        /// A builder that starts from `map`; its first change to each shared
        /// node copies it, later changes are in place.
        @inlinable
        public init(_ map: PersistentMap) {
            _map = map
        }

        /// The number of entries so far. O(1).
        @inlinable public var count: Int { _map.count }

        /// Sets `value` for `key`, returning the replaced value. O(log32 n).
        @inlinable
        @discardableResult
        public mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
            _map.updateValue(value, forKey: key)
        }

        /// Removes `key`, returning its value. O(log32 n).
        @inlinable
        @discardableResult
        public mutating func removeValue(forKey key: Key) -> Value? {
            _map.removeValue(forKey: key)
        }

        /// Reads or writes the value for `key`. O(log32 n).
        @inlinable
        public subscript(key: Key) -> Value? {
            get { _map[key] }
            set { _map[key] = newValue }
        }

        /// The map built so far. O(1).
        @inlinable
        public func build() -> PersistentMap { _map }
    }
}

// MARK: Bulk construction

extension _MapNode {
    /// Builds a canonical trie from entries with distinct keys, allocating
    /// each node once at its exact size: at each level a counting sort on
    /// the 5 hash bits of that level groups the entries into slots.
    ///
    /// - Returns: nil when two entries have equal keys (the caller decides
    ///   whether that is an error).
    @inlinable
    static func build(_ items: [Item], _ hashes: [UInt64]) -> _MapNode? {
        precondition(items.count == hashes.count)
        guard !items.isEmpty else { return nil }
        var order = [Int32](unsafeUninitializedCapacity: items.count) { buffer, count in
            for i in 0..<buffer.count { buffer[i] = Int32(truncatingIfNeeded: i) }
            count = buffer.count
        }
        var scratch = [Int32](repeating: 0, count: items.count)
        return items.withUnsafeBufferPointer { items in
            hashes.withUnsafeBufferPointer { hashes in
                order.withUnsafeMutableBufferPointer { order in
                    scratch.withUnsafeMutableBufferPointer { scratch in
                        build(items, hashes, order, scratch, range: 0..<items.count, shift: 0)
                    }
                }
            }
        }
    }

    @inlinable
    static func build(
        _ items: UnsafeBufferPointer<Item>,
        _ hashes: UnsafeBufferPointer<UInt64>,
        _ order: UnsafeMutableBufferPointer<Int32>,
        _ scratch: UnsafeMutableBufferPointer<Int32>,
        range: Range<Int>,
        shift: Int
    ) -> _MapNode? {
        if shift >= maximumShift {
            // Every hash in the range is equal: a collision node, keys distinct.
            let node = allocate(itemCapacity: range.count, childCapacity: 0, isCollision: true)
            // The header counts every item as soon as it is placed, so a
            // failure returns without writing to a node it is about to free,
            // and the node's deinit releases exactly the items placed. The
            // node outlives every pointer taken from it.
            let isComplete = withExtendedLifetime(node) { () -> Bool in
                for (offset, position) in range.enumerated() {
                    let item = items[Int(order[position])]
                    for j in 0..<offset where node._items[j].key == item.key { return false }
                    (node._items + offset).initialize(to: item)
                    node._header.pointee.dataMap = UInt32(offset + 1)
                }
                return true
            }
            return isComplete ? node : nil
        }
        // Counting sort of the range by this level's slot.
        var counts = (0..<33).map { _ in 0 }
        for position in range {
            let slot = Int((hashes[Int(order[position])] &>> UInt64(shift)) & 31)
            counts[slot + 1] += 1
        }
        for slot in 0..<32 { counts[slot + 1] += counts[slot] }
        var cursor = counts
        for position in range {
            let entry = order[position]
            let slot = Int((hashes[Int(entry)] &>> UInt64(shift)) & 31)
            scratch[range.lowerBound + cursor[slot]] = entry
            cursor[slot] += 1
        }
        for position in range { order[position] = scratch[position] }

        var dataMap: UInt32 = 0
        var nodeMap: UInt32 = 0
        for slot in 0..<32 {
            let size = counts[slot + 1] - counts[slot]
            if size == 1 { dataMap |= 1 << UInt32(slot) } else if size > 1 { nodeMap |= 1 << UInt32(slot) }
        }
        let node = allocate(itemCapacity: dataMap.nonzeroBitCount, childCapacity: nodeMap.nonzeroBitCount)
        // As above: the maps count each item and child as soon as it is
        // placed (so a failure leaves the node's deinit exactly what to
        // release), and the node outlives every pointer taken from it.
        let isComplete = withExtendedLifetime(node) { () -> Bool in
            var itemCount = 0
            var childCount = 0
            for slot in 0..<32 {
                let start = range.lowerBound + counts[slot]
                let end = range.lowerBound + counts[slot + 1]
                if end - start == 1 {
                    (node._items + itemCount).initialize(to: items[Int(order[start])])
                    itemCount += 1
                    node._header.pointee.dataMap |= 1 << UInt32(slot)
                } else if end - start > 1 {
                    guard
                        let child = build(
                            items,
                            hashes,
                            order,
                            scratch,
                            range: start..<end,
                            shift: shift + bitsPerLevel
                        )
                    else {
                        return false
                    }
                    (node._children + childCount).initialize(to: child)
                    childCount += 1
                    node._header.pointee.nodeMap |= 1 << UInt32(slot)
                }
            }
            return true
        }
        return isComplete ? node : nil
    }
}

extension PersistentMap {
    /// Creates a map from distinct keys and their values, building every
    /// node at its final size in one pass (faster than inserting one by
    /// one). O(n log32 n).
    ///
    /// - Precondition: the keys are distinct.
    @inlinable
    public init(uniqueKeysWithValues entries: some Sequence<(Key, Value)>) {
        guard let map = PersistentMap(checkingUniqueKeysWithValues: entries) else {
            preconditionFailure("PersistentMap(uniqueKeysWithValues:): duplicate keys")
        }
        self = map
    }

    /// Creates a map from keys and their values like
    /// `init(uniqueKeysWithValues:)`, or returns nil when a key repeats
    /// (for input that is not trusted, such as a decoded file). O(n log32 n).
    @inlinable
    public init?(checkingUniqueKeysWithValues entries: some Sequence<(Key, Value)>) {
        var items: [_MapItem<Key, Value>] = []
        var hashes: [UInt64] = []
        items.reserveCapacity(entries.underestimatedCount)
        hashes.reserveCapacity(entries.underestimatedCount)
        for (key, value) in entries {
            items.append(_MapItem(key: key, value: value))
            hashes.append(_hash(key))
        }
        guard !items.isEmpty else {
            self.init()
            return
        }
        guard let root = _Node.build(items, hashes) else { return nil }
        self.init(_root: root, count: items.count)
    }

    /// Creates a map from entries that may repeat a key, combining the
    /// values of a repeated key with `combine(old, new)`. O(n log32 n).
    @inlinable
    public init<S: Sequence>(
        _ entries: S,
        uniquingKeysWith combine: (Value, Value) throws -> Value
    ) rethrows where S.Element == (Key, Value) {
        self.init()
        try merge(entries, uniquingKeysWith: combine)
    }
}

extension PersistentMap: ExpressibleByDictionaryLiteral {
    /// Creates a map from a dictionary literal.
    ///
    /// - Precondition: the keys are distinct.
    @inlinable
    public init(dictionaryLiteral elements: (Key, Value)...) {
        self.init(uniqueKeysWithValues: elements)
    }
}
