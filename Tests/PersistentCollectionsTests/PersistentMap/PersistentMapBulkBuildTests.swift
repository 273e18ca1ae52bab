import PersistentCollections
import Testing

/// Counts the live `Tracked` instances made with it (one per test, so tests
/// running in parallel do not disturb each other's counts).
final class LiveCount {
    var live = 0
}

/// An instance that is counted while it lives.
final class Tracked {
    let count: LiveCount

    init(_ count: LiveCount) {
        self.count = count
        count.live += 1
    }

    deinit { count.live -= 1 }
}

/// A key whose hash the test chooses (like `Collider`) and whose every copy
/// keeps one `Tracked` alive, so a leaked or doubly freed key shows in the count.
struct TrackedKey: Hashable, CustomStringConvertible {
    var id: Int
    var hash: Int
    var life: Tracked

    static func == (lhs: TrackedKey, rhs: TrackedKey) -> Bool { lhs.id == rhs.id }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    var description: String { "#\(id)/h\(hash)" }
}

@Suite("PersistentMap bulk build")
struct PersistentMapBulkBuildTests {
    /// Entries `0..<count` shaped by `shape`, with the key of entry
    /// `repeated` appearing again at `position` (nil: no repeat).
    static func entries(
        count: Int,
        shape: KeyShape,
        repeated: Int?,
        at position: Int,
        life: LiveCount
    ) -> [(TrackedKey, Tracked)] {
        func key(_ id: Int) -> TrackedKey {
            TrackedKey(id: id, hash: shape.key(id).hash, life: Tracked(life))
        }
        var entries = (0..<count).map { (key($0), Tracked(life)) }
        if let repeated {
            entries.insert((key(repeated), Tracked(life)), at: min(position, entries.count))
        }
        return entries
    }

    @Test(
        "a repeated key returns nil and frees every key and value placed so far",
        arguments: KeyShape.allCases,
        [2, 3, 15, 16, 17, 33, 1_000]
    )
    func repeatedKey(shape: KeyShape, count: Int) {
        let life = LiveCount()
        // Which key repeats (first, middle, last) and where the repeat goes
        // (first, middle, last), so the failing slot comes before, between
        // and after the slots and collision items built so far.
        let picks = Set([0, count / 2, count - 1])
        for repeated in picks {
            for position in Set([0, count / 2, count]) {
                do {
                    let input = Self.entries(count: count, shape: shape, repeated: repeated, at: position, life: life)
                    #expect(life.live == 2 * input.count)
                    let map = PersistentMap(checkingUniqueKeysWithValues: input)
                    #expect(map == nil, "shape \(shape), count \(count), repeat of \(repeated) at \(position)")
                }
                #expect(life.live == 0, "shape \(shape), count \(count), repeat of \(repeated) at \(position)")
            }
        }
    }

    @Test("every key repeated, and keys repeated many times, leak nothing", arguments: KeyShape.allCases)
    func manyRepeats(shape: KeyShape) {
        let life = LiveCount()
        do {
            var input: [(TrackedKey, Tracked)] = []
            for _ in 0..<3 {
                for id in 0..<200 {
                    input.append((TrackedKey(id: id, hash: shape.key(id).hash, life: Tracked(life)), Tracked(life)))
                }
            }
            #expect(PersistentMap(checkingUniqueKeysWithValues: input) == nil)
        }
        #expect(life.live == 0)
    }

    @Test(
        "distinct keys build a map holding each key and value once",
        arguments: KeyShape.allCases,
        [1, 2, 16, 17, 33, 1_000]
    )
    func distinctKeys(shape: KeyShape, count: Int) {
        let life = LiveCount()
        do {
            let input = Self.entries(count: count, shape: shape, repeated: nil, at: 0, life: life)
            let map = PersistentMap(checkingUniqueKeysWithValues: input)
            #expect(map?.count == count)
            map?._invariantCheck()
            for (key, value) in input { #expect(map?[key] === value) }
        }
        #expect(life.live == 0)
    }

    @Test("labeled pairs (another map's, a Dictionary's elements) build the same map")
    func labeledPairs() {
        let dictionary = Dictionary(uniqueKeysWithValues: (0..<2_000).map { ("key \($0)", $0) })
        let map = PersistentMap(uniqueKeysWithValues: dictionary)
        map._invariantCheck()
        #expect(map.count == dictionary.count)
        for (key, value) in dictionary { #expect(map[key] == value) }
        #expect(PersistentMap(uniqueKeysWithValues: map) == map)
        let labeled: [(key: Int, value: String)] = [(key: 1, value: "a"), (key: 2, value: "b")]
        #expect(PersistentMap(uniqueKeysWithValues: labeled) == [1: "a", 2: "b"])
    }
}
