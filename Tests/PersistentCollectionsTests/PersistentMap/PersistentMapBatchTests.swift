import PersistentCollections
import Testing

@Suite("PersistentMap batched lookup")
struct PersistentMapBatchTests {
    @Test(
        "values(forKeys:) answers as one lookup per key: absent, repeated and colliding keys, in the keys' order",
        arguments: KeyShape.allCases,
        [0, 1, 2, 16, 17, 33, 1_000, 40_000]
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
            // The same through forEachValue: each present key once, in order.
            var visited: [(Int, Int)] = []
            map.forEachValue(forKeys: keys) { position, value in visited.append((position, copy value)) }
            let present = keys.indices.compactMap { i in model[keys[i]].map { (i, $0) } }
            #expect(visited.map(\.0) == present.map(\.0), "positions, batch of \(keys.count), \(count) \(shape)")
            #expect(visited.map(\.1) == present.map(\.1), "values, batch of \(keys.count), \(count) \(shape)")
        }
    }

    final class Payload {
        let id: Int
        init(_ id: Int) { self.id = id }
    }

    @Test("class values: each found value is the stored object, retained by the result and released with it")
    func classValuesAreRetainedOnce() {
        weak var watched: Payload?
        var map = PersistentMap<Int, Payload>()
        do {
            for key in 0..<1_000 {
                let payload = Payload(key)
                if key == 500 { watched = payload }
                map[key] = payload
            }
            var found = map.values(forKeys: [500, 2_000, 500, 7])
            #expect(found.map { $0?.id } == [500, nil, 500, 7])
            #expect(found[0] === watched && found[2] === watched)
            map[500] = nil
            #expect(watched != nil, "the result keeps the value it found")
            found.removeAll()
        }
        #expect(watched == nil, "the value outlived both the map's entry and the result")
    }

    @Test("forEachValue: an error thrown by the body stops the walk and releases nothing it does not own")
    func forEachValueThrows() {
        struct Stop: Error {}
        weak var watched: Payload?
        var map = PersistentMap<Int, Payload>()
        for key in 0..<100 {
            let payload = Payload(key)
            if key == 3 { watched = payload }
            map[key] = payload
        }
        var seen: [Int] = []
        #expect(throws: Stop.self) {
            try map.forEachValue(forKeys: [1, 3, 5, 7]) { _, payload in
                seen.append(payload.id)
                if payload.id == 5 { throw Stop() }
            }
        }
        #expect(seen == [1, 3, 5])
        #expect(watched != nil && map[3]?.id == 3, "the map still holds its value")
        map[3] = nil
        #expect(watched == nil, "the walk kept no reference to the value")
    }

    @Test("a batch of 100,000 keys (probes on the heap, not the stack) answers as single lookups")
    func largeBatch() {
        var map = PersistentMap<Int, Int>()
        for key in 0..<50_000 { map[key * 3] = key }
        let keys = Array(0..<100_000)
        let found = map.values(forKeys: keys)
        #expect(found == keys.map { map[$0] })
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
