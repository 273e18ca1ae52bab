import PersistentCollections
import Testing

/// Node copies and removals on maps whose nodes are partly shared, partly
/// unique, with keys and values that count their own lives: every element
/// copied is released once, none is released twice, nothing stays alive.
@Suite("PersistentMap lifetimes and partial sharing")
struct PersistentMapLifetimeTests {
    /// Removes through the `_modify` accessor (an `inout` access of the subscript).
    static func clear(_ value: inout Tracked?) { value = nil }

    @Test(
        "random edits of kept and dropped versions with counted keys and values leak and double-free nothing",
        arguments: KeyShape.allCases
    )
    func countedElements(shape: KeyShape) {
        let life = LiveCount()
        do {
            var random = SeededRandom(seed: 91 &+ UInt64(shape.rawValue.utf8.count))
            let keySpace = shape == .constant ? 40 : 800
            func key(_ id: Int) -> TrackedKey { TrackedKey(id: id, hash: shape.key(id).hash, life: Tracked(life)) }
            var map = PersistentMap<TrackedKey, Tracked>()
            var model: [Int: ObjectIdentifier] = [:]
            var kept: [(PersistentMap<TrackedKey, Tracked>, [Int: ObjectIdentifier])] = []
            for step in 0..<4_000 {
                let id = random.int(below: keySpace)
                switch random.int(below: 100) {
                case 0..<40:
                    let value = Tracked(life)
                    map[key(id)] = value
                    model[id] = ObjectIdentifier(value)
                case 40..<65:
                    let removed = map.removeValue(forKey: key(id))
                    #expect(removed.map(ObjectIdentifier.init) == model.removeValue(forKey: id), "step \(step)")
                case 65..<75:
                    Self.clear(&map[key(id)])
                    model[id] = nil
                case 75..<85:
                    // Keep this version: the next edits copy the paths they touch.
                    kept.append((map, model))
                default:
                    // Drop a kept version: its nodes become unique again.
                    if !kept.isEmpty { kept.remove(at: random.int(below: kept.count)) }
                }
                if step % 500 == 499 {
                    map._invariantCheck()
                    #expect(map.count == model.count, "step \(step)")
                    for (id, value) in model {
                        #expect(map[key(id)].map(ObjectIdentifier.init) == value, "step \(step) key \(id)")
                    }
                }
            }
            for (version, expected) in kept {
                version._invariantCheck()
                #expect(version.count == expected.count)
                for (k, v) in version { #expect(expected[k.id] == ObjectIdentifier(v)) }
            }
        }
        #expect(life.live == 0, "shape \(shape): \(life.live) keys or values outlived every map")
    }

    @Test("a removal through a shared subtree under a unique root copies only for a key it holds")
    func partiallyShared() {
        var map = PersistentMap<Int, Int>()
        for key in stride(from: 0, to: 20_000, by: 2) { map[key] = key }
        let original = map
        // One update: the root and one path are unique, every other subtree shared.
        map[0] = -1
        let afterUpdate = map.nodeBytes(notSharedWith: original)
        #expect(afterUpdate > 0)
        for key in stride(from: 1, to: 20_000, by: 2) { #expect(map.removeValue(forKey: key) == nil) }
        #expect(map.nodeBytes(notSharedWith: original) == afterUpdate, "absent keys copied nodes")
        // Present keys under shared children of the unique root: copied, removed,
        // canonical shape restored; the original keeps every key.
        var expected = Dictionary(uniqueKeysWithValues: stride(from: 0, to: 20_000, by: 2).map { ($0, $0) })
        expected[0] = -1
        var random = SeededRandom(seed: 5)
        for _ in 0..<3_000 {
            let key = 2 * random.int(below: 10_000)
            #expect(map.removeValue(forKey: key) == expected.removeValue(forKey: key))
        }
        map._invariantCheck()
        original._invariantCheck()
        #expect(map.count == expected.count && original.count == 10_000)
        for (key, value) in expected { #expect(map[key] == value) }
        for key in stride(from: 0, to: 20_000, by: 2) { #expect(original[key] == key) }
    }

    /// Builds maps of 1,000 keys, keeps every tenth version through edits,
    /// checks them, then drops them all: a node's deinit destroys its items
    /// one key and one value at a time, at offsets computed from the key's
    /// and value's layouts (the invariant check compares them with the
    /// compiler's), so both fields must be found where they are, whatever
    /// their sizes and alignments.
    static func roundTrip<Key: Hashable, Value>(
        _ makeKey: (Int) -> Key,
        _ makeValue: (Int, LiveCount) -> Value,
        _ id: (Value) -> Int,
        _ label: String
    ) {
        let life = LiveCount()
        do {
            var map = PersistentMap<Key, Value>()
            var kept: [PersistentMap<Key, Value>] = []
            for i in 0..<1_000 {
                map[makeKey(i)] = makeValue(i, life)
                if i % 10 == 0 { kept.append(map) }
            }
            for i in stride(from: 0, to: 1_000, by: 3) { map[makeKey(i)] = makeValue(-i, life) }
            for i in stride(from: 1, to: 1_000, by: 7) { map.removeValue(forKey: makeKey(i)) }
            map._invariantCheck()
            for (n, version) in kept.enumerated() {
                version._invariantCheck()
                #expect(version.count == n * 10 + 1, "\(label): kept version \(n)")
                for i in 0...(n * 10) { #expect(version[makeKey(i)].map(id) == i, "\(label): key \(i)") }
            }
            for i in 0..<1_000 {
                let expected: Int? = i % 7 == 1 ? nil : (i % 3 == 0 ? -i : i)
                #expect(map[makeKey(i)].map(id) == expected, "\(label): key \(i)")
            }
        }
        #expect(life.live == 0, "\(label): \(life.live) values outlived every map")
    }

    /// A key of 3 bytes at 2-byte alignment: the value after it starts at
    /// its own alignment, past padding.
    struct OddKey: Hashable {
        var low: UInt16
        var high: UInt8
        init(_ i: Int) {
            low = UInt16(i & 0xFFFF)
            high = UInt8(truncatingIfNeeded: i >> 16)
        }
    }

    @Test("items of every size and alignment mix are destroyed where they lie")
    func itemLayouts() {
        Self.roundTrip(
            { $0 },
            { i, life in (Int8(truncatingIfNeeded: i), Tracked(life), i) },
            { $0.2 },
            "Int, (Int8, class, Int)"
        )
        Self.roundTrip(
            { Int16($0) },
            { i, life in (Tracked(life), Int8(truncatingIfNeeded: i), i) },
            { $0.2 },
            "Int16, (class, Int8, Int)"
        )
        Self.roundTrip({ OddKey($0) }, { i, life in (Tracked(life), i) }, { $0.1 }, "3-byte key, (class, Int)")
        Self.roundTrip(
            { OddKey($0) },
            { i, _ in Int16(i) },
            { Int($0) },
            "3-byte key, Int16 (trivial)"
        )
        Self.roundTrip({ "key \($0) ✓" }, { i, _ in Int32(i) }, { Int($0) }, "String, Int32")
        Self.roundTrip(
            { "k\($0)" },
            { i, _ in "value \(i) · long enough to live on the heap" },
            { Int($0.split(separator: " ")[1])! },
            "String, String"
        )
        Self.roundTrip(
            { UInt16($0) },
            { i, life in (Double(i), Tracked(life)) },
            { Int($0.0) },
            "UInt16, (Double, class)"
        )
    }
}
