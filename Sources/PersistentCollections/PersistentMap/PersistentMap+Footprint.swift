extension PersistentMap {
    /// Counts this map's memory in `counter`: its trie nodes, plus what
    /// `element` reports for each item of a node not seen before (the
    /// elements' out-of-line storage; an item's inline bytes are part of its
    /// node). A node seen before — shared with a map counted earlier — is
    /// counted as shared with its whole subtree, without walking it.
    ///
    /// - Complexity: O(nodes and items not shared with maps counted before).
    public func footprint(
        in counter: FootprintCounter,
        element: (Key, Value) -> Footprint = { _, _ in Footprint() }
    ) -> Footprint {
        guard let root = _root else { return Footprint() }
        return root._footprint(in: counter, element: element)
    }
}

extension PersistentMap {
    /// Bytes of this map's trie nodes that `other` does not share: what
    /// keeping this map costs when `other` is kept anyway. Descends both
    /// tries together and skips every subtree they share, so for two
    /// versions a few changes apart it is O(changes · depth), not O(n).
    /// Elements' out-of-line storage is not included.
    @inlinable
    public func nodeBytes(notSharedWith other: PersistentMap) -> Int {
        nodeBytes(notSharedWith: other) { _, _ in 0 }
    }
}

extension PersistentMap {
    /// Bytes of this map's trie nodes that `other` does not share, plus
    /// what `elementBytes` reports for each item of those nodes, given the
    /// item's value in `other` when `other` holds the same key in the same
    /// place (nil otherwise): the caller tells shared out-of-line storage
    /// from storage only this map holds. Same skipping as
    /// ``nodeBytes(notSharedWith:)``: O(changes · depth · node width).
    @inlinable
    public func nodeBytes(
        notSharedWith other: PersistentMap,
        elementBytes: (Value, Value?) -> Int
    ) -> Int {
        guard let root = _root else { return 0 }
        return root._nodeBytes(notSharedWith: other._root, elementBytes: elementBytes)
    }

    /// Bytes of every trie node of this map, plus `elementBytes` of each
    /// value: the memory this map alone would hold. O(n).
    ///
    /// An error thrown by `elementBytes` ends the walk at once and is
    /// rethrown: how a caller gives up a long measurement.
    @inlinable
    public func allocatedBytes(elementBytes: (Value) throws -> Int) rethrows -> Int {
        guard let root = _root else { return 0 }
        return try root._allocatedBytes(elementBytes: elementBytes)
    }
}
