import PersistentCollections
import Testing

@Suite("PersistentMap batched lookup")
struct PersistentMapBatchTests {
    @Test(
        "values(forKeys:) answers as one lookup per key: absent, repeated and colliding keys, in the keys' order",
        arguments: KeyShape.allCases,
        [0, 1, 2, 33, 1_000, 40_000]
    )
    func batchMatchesSingleLookups(shape: KeyShape, count: Int) {
        let count = shape == .distinct ? count : min(count, 1_000)
        let map = PersistentMapPartsTests.map(count: count, shape: shape, seed: UInt64(count) &+ 7)
        let model = Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) })
        var random = SeededRandom(seed: UInt64(count) &* 31 &+ 1)
        for batch in [0, 1, 2, 7, 64, 500] {
            // Keys present, absent (ids past the map's), and some repeated.
            let keys = (0..<batch).map { _ in shape.key(Int(random.next() % UInt64(count + count / 2 + 2))) }
                .flatMap { key in random.next() % 5 == 0 ? [key, key] : [key] }
            let found = map.values(forKeys: keys)
            #expect(found.count == keys.count)
            for (key, value) in zip(keys, found) {
                #expect(value == model[key], "\(key) in a batch of \(keys.count), \(count) \(shape)")
            }
            var prepared: [Int] = []
            _ = map.values(forKeys: keys, preparing: { prepared.append(copy $0) })
            #expect(prepared == found.compactMap { $0 }, "prepare sees each found value once, in key order")
        }
    }

    @Test("an empty map answers nil for each key; an empty batch gives an empty result")
    func emptyCases() {
        let empty = PersistentMap<Collider, Int>()
        #expect(empty.values(forKeys: [Collider(1, hash: 1), Collider(2, hash: 2)]) == [nil, nil])
        let map: PersistentMap<Int, String> = [1: "a", 2: "b"]
        #expect(map.values(forKeys: [Int]()) == [])
        #expect(map.values(forKeys: 0..<4) == [nil, "a", "b", nil])
    }
}
