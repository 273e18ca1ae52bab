import PersistentCollections
import Synchronization
import Testing

/// `LiveCount` for instances released on any thread.
final class SharedLiveCount: Sendable {
    let live = Atomic<Int>(0)
    var value: Int { live.load(ordering: .sequentiallyConsistent) }
}

/// An instance counted while it lives, from any thread; equal only to itself.
final class SharedTracked: Sendable, Equatable {
    static func == (lhs: SharedTracked, rhs: SharedTracked) -> Bool { lhs === rhs }

    let count: SharedLiveCount

    init(_ count: SharedLiveCount) {
        self.count = count
        count.live.wrappingAdd(1, ordering: .sequentiallyConsistent)
    }

    deinit { count.live.wrappingSubtract(1, ordering: .sequentiallyConsistent) }
}

/// `TrackedKey` for the concurrent build, whose keys and values must be Sendable.
struct SharedTrackedKey: Hashable, Sendable, CustomStringConvertible {
    var id: Int
    var hash: Int
    var life: SharedTracked

    static func == (lhs: SharedTrackedKey, rhs: SharedTrackedKey) -> Bool { lhs.id == rhs.id }

    func hash(into hasher: inout Hasher) {
        hasher.combine(hash)
    }

    var description: String { "#\(id)/h\(hash)" }
}

@Suite("PersistentMap concurrent build")
struct PersistentMapConcurrentBuildTests {
    /// `count` entries split into parts of random sizes (some empty), with
    /// the key of entry `repeated` added again at `position` (nil: none).
    static func parts(
        count: Int,
        shape: KeyShape,
        repeated: Int? = nil,
        at position: Int = 0,
        life: SharedLiveCount,
        random: inout SeededRandom
    ) -> [[(SharedTrackedKey, SharedTracked)]] {
        func entry(_ id: Int) -> (SharedTrackedKey, SharedTracked) {
            (SharedTrackedKey(id: id, hash: shape.key(id).hash, life: SharedTracked(life)), SharedTracked(life))
        }
        var all = (0..<count).map(entry)
        if let repeated { all.insert(entry(repeated), at: min(position, all.count)) }
        var parts: [[(SharedTrackedKey, SharedTracked)]] = []
        var start = 0
        while start < all.count {
            let size = random.int(below: 3) == 0 ? 0 : 1 + random.int(below: count / 3 + 1)
            let end = min(all.count, start + size)
            parts.append(Array(all[start..<end]))
            start = end
        }
        return parts
    }

    @Test(
        "the same map as the sequential build, each key and value held once",
        arguments: KeyShape.allCases,
        [4_096, 40_000]
    )
    func sameMap(shape: KeyShape, count: Int) {
        // Colliding hashes put keys in a few collision nodes, checked pairwise.
        let count = shape == .distinct ? count : min(count, 4_100)
        let life = SharedLiveCount()
        var random = SeededRandom(seed: UInt64(count))
        do {
            let parts = Self.parts(count: count, shape: shape, life: life, random: &random)
            let map = PersistentMap(checkingUniqueKeysWithValuesOf: parts)
            let sequential = PersistentMap(checkingUniqueKeysWithValues: parts.joined())
            #expect(map != nil, "seed \(count)")
            map?._invariantCheck()
            #expect(map?.count == count)
            #expect(map == sequential, "seed \(count)")
            for (key, value) in parts.joined() { #expect(map?[key] === value) }
            #expect(life.value == 2 * count)
        }
        #expect(life.value == 0)
    }

    @Test(
        "a key repeated within or across parts returns nil and frees every key and value",
        arguments: KeyShape.allCases
    )
    func repeatedKey(shape: KeyShape) {
        let count = 4_100
        let life = SharedLiveCount()
        for (seed, repeated) in [0, count / 2, count - 1].enumerated() {
            for position in [0, count / 3, count] {
                var random = SeededRandom(seed: UInt64(seed * 10_000 + position))
                do {
                    let parts = Self.parts(
                        count: count,
                        shape: shape,
                        repeated: repeated,
                        at: position,
                        life: life,
                        random: &random
                    )
                    #expect(
                        PersistentMap(checkingUniqueKeysWithValuesOf: parts) == nil,
                        "shape \(shape), repeat of \(repeated) at \(position)"
                    )
                }
                #expect(life.value == 0, "shape \(shape), repeat of \(repeated) at \(position)")
            }
        }
    }

    @Test(
        "parts the caller gives up are moved in: the same entries, each key and value freed once",
        arguments: [4_096, 40_000]
    )
    func consumedParts(count: Int) {
        let life = SharedLiveCount()
        var random = SeededRandom(seed: UInt64(count) &+ 7)
        do {
            let parts = Self.parts(count: count, shape: .distinct, life: life, random: &random)
            var expected: [Int: ObjectIdentifier] = [:]
            for (key, value) in parts.joined() { expected[key.id] = ObjectIdentifier(value) }
            let map = PersistentMap(checkingUniqueKeysWithValuesOf: consume parts)
            #expect(map != nil, "seed \(count)")
            map?._invariantCheck()
            var found: [Int: ObjectIdentifier] = [:]
            for (key, value) in map ?? [:] { found[key.id] = ObjectIdentifier(value) }
            #expect(found == expected, "seed \(count)")
            #expect(life.value == 2 * count)
        }
        #expect(life.value == 0)
        // A repeated key in parts given up: nil, and every entry freed.
        for position in [0, count / 2, count] {
            do {
                let parts = Self.parts(
                    count: count,
                    shape: .distinct,
                    repeated: count / 3,
                    at: position,
                    life: life,
                    random: &random
                )
                #expect(PersistentMap(checkingUniqueKeysWithValuesOf: consume parts) == nil, "repeat at \(position)")
            }
            #expect(life.value == 0, "repeat at \(position)")
        }
    }

    @Test("no parts, empty parts and small inputs build as the sequential build does")
    func smallInputs() {
        #expect(PersistentMap<Int, Int>(checkingUniqueKeysWithValuesOf: []) == [:])
        #expect(PersistentMap<Int, Int>(checkingUniqueKeysWithValuesOf: [[], []]) == [:])
        let parts = [[(1, 10), (2, 20)], [], [(3, 30)]]
        #expect(PersistentMap(checkingUniqueKeysWithValuesOf: parts) == [1: 10, 2: 20, 3: 30])
        #expect(PersistentMap(checkingUniqueKeysWithValuesOf: [[(1, 10)], [(1, 11)]]) == nil)
    }

    /// Items smaller than the build's entries, and items larger than two of
    /// them: the spare buffer (items and hashes, then entries and scratch)
    /// is sized and laid out for either, with the hashes past the items at
    /// an 8-byte boundary for any count.
    @Test("items of 4 and of 48 bytes, at counts not a multiple of 8, build as the sequential build does")
    func itemSizes() {
        for count in [4_096, 4_097, 4_099, 9_003] {
            var random = SeededRandom(seed: UInt64(count))
            var keys = Array(Int16.min..<(Int16.min + Int16(count)))
            keys.shuffle(using: &random)
            let small = keys.map { ($0, UInt8(truncatingIfNeeded: $0)) }
            let smallParts = [Array(small[..<(count / 3)]), Array(small[(count / 3)...])]
            let smallMap = PersistentMap(checkingUniqueKeysWithValuesOf: smallParts)
            #expect(smallMap == PersistentMap(uniqueKeysWithValues: small), "count \(count)")
            smallMap?._invariantCheck()

            let large = keys.map { key in (key, (Int(key), Int(key) * 2, Int(key) * 3, Int(key) * 4, Int(key) * 5)) }
            let largeMap = PersistentMap(checkingUniqueKeysWithValuesOf: [large])
            #expect(largeMap?.count == count, "count \(count)")
            #expect(large.allSatisfy { largeMap?[$0.0]?.4 == Int($0.0) * 5 }, "count \(count)")
            largeMap?._invariantCheck()
        }
    }
}
