import Dispatch
import PersistentCollections
import Synchronization
import Testing

@Suite("PersistentMap parts")
struct PersistentMapPartsTests {
    static func map(count: Int, shape: KeyShape, seed: UInt64) -> PersistentMap<Collider, Int> {
        var random = SeededRandom(seed: seed)
        var map = PersistentMap<Collider, Int>()
        // Inserted in a shuffled order, some removed again: the trie's
        // shape is canonical, but the test should not rely on it.
        var ids = Array(0..<(count + count / 4))
        ids.shuffle(using: &random)
        for id in ids { map[shape.key(id)] = id }
        for id in ids.prefix(count / 4) { map[shape.key(id)] = nil }
        return map
    }

    @Test(
        "the parts, visited in order, are the map's entries in its order",
        arguments: KeyShape.allCases,
        [0, 1, 15, 16, 17, 31, 33, 1_000, 40_000]
    )
    func partsCoverTheMapInOrder(shape: KeyShape, count: Int) {
        let count = shape == .distinct ? count : min(count, 1_000)
        let map = Self.map(count: count, shape: shape, seed: UInt64(count))
        let expected = map.map { $0.key }
        for maximum in [-1, 0, 1, 2, 3, 8, 64] {
            let parts = map.parts(maximumCount: maximum)
            var visited: [Collider] = []
            for part in parts {
                var inPart = 0
                part.forEach { key, value in
                    #expect(key.id == value, "entry \(key) carries \(value)")
                    visited.append(key)
                    inPart += 1
                }
                #expect(inPart == part.count, "a part of \(part.count) visited \(inPart) (maximum \(maximum))")
                #expect(part.count > 0, "an empty part (maximum \(maximum), \(count) \(shape))")
            }
            #expect(visited == expected, "parts out of order or incomplete (maximum \(maximum), \(count) \(shape))")
            #expect(parts.isEmpty == map.isEmpty)
            #expect(parts.count <= max(maximum, 1), "\(parts.count) parts for a maximum of \(maximum)")
        }
    }

    @Test("a large map is cut into parts of similar size")
    func partsAreBalanced() {
        let map = Self.map(count: 100_000, shape: .distinct, seed: 7)
        let parts = map.parts(maximumCount: 8)
        #expect(parts.count == 8)
        // Each subtrie of the root holds about 1/16 of the entries, so a
        // part of one to three of them stays near 1/8.
        for part in parts {
            #expect(part.count > map.count / 24 && part.count < map.count / 4, "part of \(part.count)")
        }
    }

    @Test("parts are visited on several threads and keep an old version's entries")
    func concurrentVisitsOfAnOldVersion() {
        var map = Self.map(count: 50_000, shape: .distinct, seed: 11)
        let old = map
        let parts = old.parts(maximumCount: 16)
        for id in 0..<10_000 { map[KeyShape.distinct.key(id)] = nil }
        let sums = Mutex([Int](repeating: 0, count: parts.count))
        DispatchQueue.concurrentPerform(iterations: parts.count) { k in
            var sum = 0
            parts[k].forEach { key, value in sum &+= key.id &+ value }
            sums.withLock { $0[k] = sum }
        }
        let expected = old.reduce(0) { $0 &+ $1.key.id &+ $1.value }
        #expect(sums.withLock { $0.reduce(0, &+) } == expected)
        #expect(parts.reduce(0) { $0 + $1.count } == old.count)
        map._invariantCheck()
        old._invariantCheck()
    }
}

/// A result that counts its live instances: a slot written twice, or
/// written and never destroyed, shows in the count.
final class _Tracked: Sendable {
    static let live = Atomic<Int>(0)
    let value: Int

    init(_ value: Int) {
        self.value = value
        Self.live.add(1, ordering: .relaxed)
    }

    deinit { Self.live.subtract(1, ordering: .relaxed) }
}

struct _PartFailure: Error, Equatable {
    var key: Int
}

@Suite("PersistentMap concurrentMap", .serialized)
struct PersistentMapConcurrentMapTests {
    @Test(
        "results in the map's order, from every part, for any number of parts",
        arguments: KeyShape.allCases,
        [0, 1, 15, 16, 17, 31, 33, 1_000, 40_000]
    )
    func resultsInOrder(shape: KeyShape, count: Int) throws {
        let count = shape == .distinct ? count : min(count, 1_000)
        let map = PersistentMapPartsTests.map(count: count, shape: shape, seed: UInt64(count) &+ 5)
        let expected = map.map { $0.value * 2 }
        for maximum in [-1, 0, 1, 2, 3, 8, 64] {
            let doubled: [Int] = try map.concurrentMap(maximumParts: maximum) { part, yield in
                part.forEach { yield($0.value * 2) }
            }
            #expect(doubled == expected, "maximum \(maximum), \(count) \(shape)")
            // Class results: each written once and released with the array.
            let tracked: [_Tracked] = try map.concurrentMap(maximumParts: maximum) { part, yield in
                part.forEach { yield(_Tracked($0.value)) }
            }
            #expect(tracked.map(\.value) == map.map { $0.value })
            #expect(_Tracked.live.load(ordering: .relaxed) == tracked.count)
        }
        #expect(_Tracked.live.load(ordering: .relaxed) == 0)
    }

    @Test("a part that throws: the earliest failing part's error, every written result destroyed")
    func failures() {
        let map = PersistentMapPartsTests.map(count: 20_000, shape: .distinct, seed: 77)
        let order = map.map { $0.value }
        var random = SeededRandom(seed: 78)
        for round in 0..<40 {
            // Failing entries anywhere, one or several; parts stop at their first.
            let failing = Set((0..<(1 + round % 3)).map { _ in order[random.int(below: order.count)] })
            let firstInOrder = order.first { failing.contains($0) }!
            #expect(throws: _PartFailure(key: firstInOrder), "round \(round)") {
                let _: [_Tracked] = try map.concurrentMap(maximumParts: 8) { part, yield in
                    try part.forEach { entry in
                        if failing.contains(entry.value) { throw _PartFailure(key: entry.value) }
                        yield(_Tracked(entry.value))
                    }
                }
            }
            #expect(_Tracked.live.load(ordering: .relaxed) == 0, "round \(round): results left alive")
        }
        // One part; a part that throws after yielding all of its results;
        // an empty map (no part: the body never runs).
        for maximum in [1, 8] {
            #expect(throws: _PartFailure(key: -1)) {
                let _: [_Tracked] = try map.concurrentMap(maximumParts: maximum) { part, yield in
                    part.forEach { yield(_Tracked($0.value)) }
                    throw _PartFailure(key: -1)
                }
            }
            #expect(_Tracked.live.load(ordering: .relaxed) == 0, "maximum \(maximum): results left alive")
        }
        let empty: [_Tracked] = try! PersistentMap<Int, Int>().concurrentMap(maximumParts: 4) { _, _ in
            throw _PartFailure(key: -2)
        }
        #expect(empty.isEmpty)
    }
}
