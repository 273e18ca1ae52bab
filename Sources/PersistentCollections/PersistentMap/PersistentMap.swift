/// An unordered collection of unique keys and their values with value
/// semantics and structural sharing: a compressed hash-array mapped prefix
/// trie (CHAMP).
///
/// Copying a `PersistentMap` is O(1). Mutating a copy copies only the
/// O(log16 n) nodes on the path to the change, so a thousand versions of a
/// million-entry map that differ by one key each cost a few hundred KB, not
/// a thousand full copies. A map that is not shared is mutated in place.
///
///     var library: PersistentMap<Int, String> = [1: "Blue River", 2: "Echo"]
///     let before = library
///     library[3] = "Velvet"              // `before` is unchanged
///     library.difference(from: before)   // inserted: [3]
///
/// Shapes are canonical (equal contents give equal tries), so `==` and
/// ``difference(from:)`` skip shared subtrees by identity and take time
/// proportional to what differs.
///
/// A key of a fixed-width integer type (`Int`, `UInt64`, `Int32`, …) is its
/// own hash: distinct keys never collide, no path is deeper than 16 levels,
/// and dense keys such as row IDs fill the trie's 16-slot nodes (at 1M
/// sequential keys, every key is 5 levels down). Keys that share their low
/// bits (all multiples of 16, say) share the top nodes of their paths instead: their
/// paths are longer, and ``parts(maximumCount:)`` and the concurrent build
/// find fewer subtries to split at. Other keys hash with `Key.hashValue`
/// (the standard library's seeded hasher). Iteration follows hash order:
/// arbitrary, and for keys of other types it varies between processes
/// unless `SWIFT_DETERMINISTIC_HASHING` is set.
@frozen
public struct PersistentMap<Key: Hashable, Value> {
    @usableFromInline typealias _Node = _MapNode<Key, Value>

    /// The trie, or nil for an empty map (so empty maps allocate nothing).
    @usableFromInline var _root: _Node?
    @usableFromInline var _count: Int

    @inlinable
    init(_root: _Node?, count: Int) {
        self._root = _root
        self._count = count
    }

    /// Creates an empty map. O(1); allocates nothing.
    @inlinable
    public init() {
        self.init(_root: nil, count: 0)
    }

    /// The number of entries. O(1).
    @inlinable public var count: Int { _count }

    /// Whether the map has no entries. O(1).
    @inlinable public var isEmpty: Bool { _count == 0 }
}

extension PersistentMap: @unchecked Sendable where Key: Sendable, Value: Sendable {}

// MARK: Reading

extension PersistentMap {
    /// The value for `key`, or nil. O(log16 n) expected.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        _root?.find(key, _hash(key))
    }

    /// Whether `key` has a value. O(log16 n) expected.
    @inlinable
    public func contains(_ key: Key) -> Bool {
        _root?.contains(key, _hash(key), shift: 0) ?? false
    }
}

// MARK: Writing

extension PersistentMap {
    /// Sets the value for `key`, returning the value it replaced, or nil if
    /// the key was new. O(log16 n): in place when this map is the only owner
    /// of the path, else copying the shared nodes on it.
    @inlinable
    @discardableResult
    public mutating func updateValue(_ value: Value, forKey key: Key) -> Value? {
        let hash = _hash(key)
        guard _root != nil else {
            _root = _Node.single(_MapItem(key: key, value: value), hash: hash, shift: 0)
            _count = 1
            _checkAfterMutation(hash: hash)
            return nil
        }
        let old = _Node.update(&_root!, key, value, hash, 0)
        if old == nil { _count += 1 }
        _checkAfterMutation(hash: hash)
        return old
    }

    /// Removes `key` and returns its value, or nil if it was absent (then
    /// nothing is copied). O(log16 n).
    @inlinable
    @discardableResult
    public mutating func removeValue(forKey key: Key) -> Value? {
        let hash = _hash(key)
        // No `let root = _root` binding here: a second reference would make
        // the root look shared and force a copy of the whole path.
        guard _root != nil else { return nil }
        let (found, removed) = _Node.remove(&_root!, key, hash, 0, isKnownPresent: false)
        guard found else { return nil }
        _didRemove()
        _checkAfterMutation(hash: hash)
        return removed
    }

    @inlinable
    mutating func _didRemove() {
        _count -= 1
        if _count == 0 { _root = nil }
    }

    /// Removes every entry. O(1) when the storage is shared, else O(n) to
    /// release it.
    @inlinable
    public mutating func removeAll() {
        self = PersistentMap()
    }

    /// Accesses the value for `key`; nil means absent. Setting nil removes
    /// the key. Mutating through this subscript (`map[k]?.append(x)`)
    /// works on the stored value in place. O(log16 n).
    @inlinable
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue {
                updateValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
        _modify {
            let hash = _hash(key)
            guard _root != nil, let slot = _Node.uniqueValueSlot(&_root!, key, hash) else {
                var value: Value? = nil
                defer {
                    if let value { updateValue(value, forKey: key) }
                }
                yield &value
                return
            }
            var value: Value? = slot.take()
            defer {
                if let value {
                    slot.put(value)
                } else {
                    _ = _Node.remove(&_root!, key, hash, 0, isKnownPresent: true, valueIsMoved: true)
                    _didRemove()
                }
                _checkAfterMutation(hash: hash)
            }
            yield &value
        }
    }

    /// Accesses the value for `key`, using `defaultValue` when it is absent;
    /// mutating inserts the key first, then changes its value in place.
    /// O(log16 n).
    @inlinable
    public subscript(key: Key, default defaultValue: @autoclosure () -> Value) -> Value {
        get { value(forKey: key) ?? defaultValue() }
        set { updateValue(newValue, forKey: key) }
        _modify {
            let hash = _hash(key)
            if _root == nil || !_root!.contains(key, hash, shift: 0) {
                updateValue(defaultValue(), forKey: key)
            }
            let slot = _Node.uniqueValueSlotOfPresentKey(&_root!, key, hash)
            defer { _checkAfterMutation(hash: hash) }
            yield &slot.value
        }
    }
}
