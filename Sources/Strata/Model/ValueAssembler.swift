import PersistentCollections

/// Builds a value from its parts in order — scalars, the starts and ends
/// of lists and maps, map keys — keeping the lists and maps still open on
/// the heap: how readers build values nested deeper than they recurse
/// (``Value/recursionLimit``).
struct _ValueAssembler {
    private enum Open {
        case list([Value])
        case map(PersistentMap<Key, Value>.Builder, key: Key?)
    }

    /// The lists and maps started and not yet ended, innermost last.
    private var open: [Open] = []
    /// The value, once its last part was added.
    private(set) var result: Value?

    /// Adds a value whole: a scalar, or a list or map read by other means.
    mutating func add(_ value: Value) {
        switch open.popLast() {
        case nil: result = value
        case .list(var elements)?:
            elements.append(value)
            open.append(.list(elements))
        case .map(var entries, let key)?:
            precondition(key != nil, "a map's value without its key")
            entries.updateValue(value, forKey: key!)
            open.append(.map(entries, key: nil))
        }
    }

    /// Starts a list; its elements come next, then ``end()``.
    mutating func beginList(capacity: Int = 0) {
        var elements: [Value] = []
        elements.reserveCapacity(capacity)
        open.append(.list(elements))
    }

    /// Starts a map; each entry's ``key(_:)`` then value come next, then ``end()``.
    mutating func beginMap() {
        open.append(.map(PersistentMap<Key, Value>.Builder(), key: nil))
    }

    /// The key of the map entry whose value comes next.
    mutating func key(_ key: Key) {
        guard case .map(let entries, nil)? = open.popLast() else { preconditionFailure("a key outside a map") }
        open.append(.map(entries, key: key))
    }

    /// Ends the list or map last started.
    mutating func end() {
        switch open.popLast() {
        case .list(let elements)?: add(.list(PersistentVector(elements)))
        case .map(let entries, nil)?: add(.map(entries.build()))
        default: preconditionFailure("an end outside a list or map, or after a key")
        }
    }
}
