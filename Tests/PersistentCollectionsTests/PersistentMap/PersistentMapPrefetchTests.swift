import PersistentCollections
import Testing

/// `prefetch(_:touching:)` descends for up to 16 keys at a time, a level
/// per round, each lane leaving the round when it finds its key or its
/// absence: these tests hold what it hands to `touch` to a `Dictionary`
/// model, for keys that collide fully, share most hash bits or scatter,
/// in batches around the 16-key width.
@Suite("PersistentMap prefetch")
struct PersistentMapPrefetchTests {
    @Test(
        "each present key's value is touched once per occurrence, absent keys never, the map unchanged",
        arguments: KeyShape.allCases
    )
    func touchesPresentValues(shape: KeyShape) {
        var random = SeededRandom(seed: 2026)
        for size in [0, 1, 2, 15, 16, 17, 40, 500, 3_000] {
            var map = PersistentMap<Collider, Int>()
            var model: [Collider: Int] = [:]
            for id in 0..<size {
                let value = random.int(below: 1_000_000)
                map[shape.key(id)] = value
                model[shape.key(id)] = value
            }
            let before = map
            for count in [0, 1, 15, 16, 17, 33, 100] {
                // Present and absent keys, some asked for twice.
                let keys = (0..<count).map { _ in shape.key(random.int(below: size * 2 + 1)) }
                var touched: [Int] = []
                map.prefetch(keys) { value in
                    touched.append(value)
                    return UInt(value)
                }
                let expected = keys.compactMap { model[$0] }
                #expect(
                    touched.sorted() == expected.sorted(),
                    "seed 2026, \(shape), size \(size), \(count) keys"
                )
            }
            #expect(map == before)
            #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == model)
            map._invariantCheck()
        }
    }

    @Test("a lazy sequence of keys, longer than one batch, on a map of integer keys")
    func lazyKeys() {
        let map = PersistentMap((0..<10_000).map { ($0, $0 * 2) }, uniquingKeysWith: { a, _ in a })
        var sum = 0
        map.prefetch((0..<20_000).lazy.filter { $0 % 3 == 0 }) { value in
            sum += value
            return 0
        }
        #expect(sum == (0..<10_000).filter { $0 % 3 == 0 }.reduce(0) { $0 + $1 * 2 })
    }
}
