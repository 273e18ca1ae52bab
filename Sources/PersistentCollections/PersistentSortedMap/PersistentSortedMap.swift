/// A sorted dictionary with value semantics and structural sharing: the
/// persistent B+tree of ``PersistentSortedSet`` over (key, value) entries
/// ordered by key.
///
/// Copying is O(1); a change copies only the O(log n) nodes on its path
/// (one allocation each) when the map is shared and is made in place when it is not. Keys are
/// kept in ascending order; ``rank(of:)`` and ``element(at:)`` are O(log n).
///
///     var plays: PersistentSortedMap = ["Echo": 3, "Blue River": 12]
///     let before = plays
///     plays["Velvet"] = 1              // `before` is unchanged
///     plays.element(at: 0)             // ("Blue River", 12)
@frozen
public struct PersistentSortedMap<Key: Comparable, Value> {
    @usableFromInline typealias _Entry = _SortedMapEntry<Key, Value>

    @usableFromInline var _entries: PersistentSortedSet<_Entry>

    @inlinable
    init(_entries: PersistentSortedSet<_Entry>) { self._entries = _entries }

    /// An empty map. O(1).
    @inlinable
    public init() { _entries = PersistentSortedSet() }

    /// The number of entries. O(1).
    @inlinable public var count: Int { _entries.count }

    /// Whether the map is empty. O(1).
    @inlinable public var isEmpty: Bool { _entries.isEmpty }
}

/// An entry, ordered and compared by key alone (searches by key go
/// through the set's probe functions, so no entry without a value exists).
@usableFromInline
struct _SortedMapEntry<Key: Comparable, Value>: Comparable {
    @usableFromInline var key: Key
    @usableFromInline var value: Value

    @inlinable
    init(key: Key, value: Value) {
        self.key = key
        self.value = value
    }

    @inlinable static func < (lhs: Self, rhs: Self) -> Bool { lhs.key < rhs.key }
    @inlinable static func == (lhs: Self, rhs: Self) -> Bool { lhs.key == rhs.key }
}

extension PersistentSortedMap: @unchecked Sendable where Key: Sendable, Value: Sendable {}

extension PersistentSortedMap {
    /// The entry for `key`, by one descent.
    @inlinable
    func _entry(_ key: Key) -> _Entry? {
        _entries._lookup(isBelow: { $0.key < key }, isAbove: { key < $0.key })
    }

    /// The value for `key`, or nil; setting nil removes the entry. O(log n).
    @inlinable
    public subscript(key: Key) -> Value? {
        get { _entry(key)?.value }
        set {
            if let newValue { updateValue(newValue, forKey: key) } else { removeValue(forKey: key) }
        }
    }

    /// Whether `key` has a value. O(log n).
    @inlinable
    public func contains(_ key: Key) -> Bool { _entry(key) != nil }

    /// Sets `key`'s value; returns the value it replaced, or nil. O(log n);
    /// a shared map copies one node per level.
    @inlinable
    @discardableResult
    public mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        _entries.update(with: _Entry(key: key, value: value))?.value
    }

    /// Removes `key`'s entry; returns its value, or nil. O(log n).
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        _entries._remove(isBelow: { $0.key < key }, isAbove: { key < $0.key })?.value
    }

    /// The number of keys less than `key`. O(log n).
    @inlinable
    public func rank(of key: Key) -> Int { _entries._rank(isBelow: { $0.key < key }, isAbove: { key < $0.key }) }

    /// The number of keys in `range`. O(log n): both bounds' ranks in one
    /// descent while they share a path.
    @inlinable
    public func count(in range: Range<Key>) -> Int {
        let lower = range.lowerBound
        let upper = range.upperBound
        return _entries._ranks(
            lowerIsBelow: { $0.key < lower },
            lowerIsAbove: { lower < $0.key },
            upperIsBelow: { $0.key < upper },
            upperIsAbove: { upper < $0.key }
        )?.count ?? 0
    }

    /// The entry at `offset` in key order. O(log n).
    /// - Precondition: `0 <= offset < count`.
    @inlinable
    public func element(at offset: Int) -> (key: Key, value: Value) {
        let entry = _entries.element(at: offset)
        return (entry.key, entry.value)
    }

    /// The entry with the smallest key, or nil. O(log n).
    @inlinable public var first: (key: Key, value: Value)? { _entries.first.map { ($0.key, $0.value) } }

    /// The entry with the largest key, or nil. O(log n).
    @inlinable public var last: (key: Key, value: Value)? { _entries.last.map { ($0.key, $0.value) } }

    /// The keys in order. O(n).
    public var keys: [Key] { _entries.map(\.key) }

    /// The values in key order. O(n).
    public var values: [Value] { _entries.map(\.value) }
}

extension PersistentSortedMap {
    /// A map of `entries`, whose keys must be strictly ascending. O(n).
    @inlinable
    public init(sortedUniqueKeysWithValues entries: some Sequence<(Key, Value)>) {
        _entries = PersistentSortedSet(sortedElements: entries.lazy.map { _Entry(key: $0.0, value: $0.1) })
    }

    /// A map of `entries` — labeled pairs, such as another sorted map's
    /// elements — whose keys must be strictly ascending (a `Dictionary`'s
    /// are in no order: ``init(uniqueKeysWithValues:)-3tk26`` sorts). O(n).
    ///
    /// An overload of its own: passed where unlabeled pairs are expected,
    /// an array of labeled pairs is converted first, a dynamic cast per
    /// element that took longer than the build. (Literals and unlabeled
    /// pairs still choose the unlabeled overload: no conversion.)
    @inlinable
    public init(sortedUniqueKeysWithValues entries: some Sequence<(key: Key, value: Value)>) {
        _entries = PersistentSortedSet(sortedElements: entries.lazy.map { _Entry(key: $0.key, value: $0.value) })
    }

    /// A map of `entries` in any order; nil when a key repeats. O(n log n).
    @inlinable
    public init?(uniqueKeysWithValues entries: some Sequence<(Key, Value)>) {
        self.init(_sorting: entries.map { _Entry(key: $0.0, value: $0.1) })
    }

    /// A map of labeled `entries` in any order; nil when a key repeats.
    /// O(n log n).
    @inlinable
    public init?(uniqueKeysWithValues entries: some Sequence<(key: Key, value: Value)>) {
        self.init(_sorting: entries.map { _Entry(key: $0.key, value: $0.value) })
    }

    @inlinable
    init?(_sorting entries: [_Entry]) {
        var sorted = entries
        sorted.sort()
        for i in sorted.indices.dropFirst() where !(sorted[i - 1] < sorted[i]) { return nil }
        _entries = PersistentSortedSet(sortedElements: sorted)
    }
}

extension PersistentSortedMap: ExpressibleByDictionaryLiteral {
    /// A map of the literal's entries; a repeated key keeps its last value.
    @inlinable
    public init(dictionaryLiteral elements: (Key, Value)...) {
        self.init()
        for (key, value) in elements { self[key] = value }
    }
}

extension PersistentSortedMap {
    /// Traps unless the tree holds its invariants (see
    /// ``PersistentSortedSet/_invariantCheck()``). O(n). For tests and
    /// debug builds.
    public func _invariantCheck() {
        _entries._invariantCheck()
    }
}
