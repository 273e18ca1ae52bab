import PersistentCollections
import Testing

/// What a test's change does to the value it finds.
enum TestEdit: Sendable, Equatable {
    /// Stores this value (an insert or a replacement).
    case set(Int)
    /// Removes the key (nothing when absent).
    case remove
    /// Leaves the value as it is.
    case keep
    /// Throws, leaving the value as it is.
    case fail
    /// Removes the key, then throws.
    case removeThenFail
    /// Stores this value, then throws.
    case setThenFail(Int)
}

struct TestEditFailure: Error, Equatable {
    var key: Int
}

/// The result a test's change returns: what it found.
typealias FoundValue = Int?

/// `update(with:maximumParts:_:)` against calling the same body on each
/// change in turn: the resulting map, the results in order, the error of
/// the first failing change, and the original left as it was.
@Suite("PersistentMap concurrent update")
struct PersistentMapConcurrentUpdateTests {
    static func edit<Key>(_ key: Key, _ edit: TestEdit, _ value: inout Int?, id: Int) throws -> FoundValue {
        let found = value
        switch edit {
        case .set(let new): value = new
        case .remove: value = nil
        case .keep: break
        case .fail: throw TestEditFailure(key: id)
        case .removeThenFail:
            value = nil
            throw TestEditFailure(key: id)
        case .setThenFail(let new):
            value = new
            throw TestEditFailure(key: id)
        }
        return found
    }

    /// Random changes: about a third on present keys, the rest on absent
    /// ones (half of them no-ops), so that subtries shrink to one entry or
    /// none and the root's children are rebuilt in canonical shape.
    static func changes<Key: Hashable>(
        of map: PersistentMap<Key, Int>,
        absent: (Int) -> Key,
        count: Int,
        failing: Int,
        random: inout SeededRandom
    ) -> PersistentMap<Key, TestEdit> {
        let present = Array(map.keys)
        var changes = PersistentMap<Key, TestEdit>()
        var attempts = 0
        while changes.count < count && attempts < 4 * count + 10 {
            attempts += 1
            let key =
                !present.isEmpty && random.chance(35)
                ? present[random.int(below: present.count)] : absent(random.int(below: 1 << 20))
            let edit: TestEdit
            switch random.int(below: 10) {
            case 0..<4: edit = .remove
            case 4..<7: edit = .set(random.int(below: 1_000_000))
            default: edit = .keep
            }
            changes[key] = edit
        }
        let keys = Array(changes.keys)
        for _ in 0..<min(failing, keys.count) {
            let failure: [TestEdit] = [.fail, .removeThenFail, .setThenFail(-1)]
            changes[keys[random.int(below: keys.count)]] = failure[random.int(below: failure.count)]
        }
        return changes
    }

    /// Checks one update against the sequential model.
    static func check<Key: Hashable & Sendable>(
        _ map: PersistentMap<Key, Int>,
        _ changes: PersistentMap<Key, TestEdit>,
        id: @escaping @Sendable (Key) -> Int,
        parts: Int,
        seed: UInt64
    ) {
        // The model: each change in turn, through the subscript.
        var expected = map
        var expectedResults: [FoundValue] = []
        var expectedError: TestEditFailure?
        for (key, change) in changes where expectedError == nil {
            do {
                expectedResults.append(try edit(key, change, &expected[key], id: id(key)))
            } catch {
                expectedError = error as? TestEditFailure
            }
        }
        let before = Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) })
        var updated = map
        do {
            let results = try updated.update(with: changes, maximumParts: parts) { key, change, value in
                try edit(key, change, &value, id: id(key))
            }
            #expect(expectedError == nil, "seed \(seed): no error where one was expected")
            #expect(results == expectedResults, "seed \(seed)")
            #expect(
                Dictionary(uniqueKeysWithValues: updated.map { ($0.key, $0.value) })
                    == Dictionary(uniqueKeysWithValues: expected.map { ($0.key, $0.value) }),
                "seed \(seed)"
            )
            #expect(updated == expected, "seed \(seed)")
        } catch {
            #expect(error as? TestEditFailure == expectedError, "seed \(seed): \(error)")
        }
        // Valid after success or failure, and the original untouched.
        updated._invariantCheck()
        #expect(updated.count == updated.reduce(0) { n, _ in n + 1 }, "seed \(seed)")
        map._invariantCheck()
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == before, "seed \(seed)")
    }

    @Test(
        "integer keys: the map and the results of applying each change in turn",
        arguments: [(0, 1_500), (40, 1_100), (300, 2_000), (5_000, 1_024), (5_000, 1_023), (20_000, 6_000)]
    )
    func integerKeys(size: Int, changeCount: Int) {
        for seed in UInt64(1)...4 {
            var random = SeededRandom(seed: seed &* 7_919 &+ UInt64(size))
            // Keys in steps that leave some root slots empty, some with one entry.
            let step = [1, 3, 32, 64][Int(seed) % 4]
            var map = PersistentMap<Int, Int>()
            for i in 0..<size { map[i * step] = i }
            let changes = Self.changes(of: map, absent: { $0 * step }, count: changeCount, failing: 0, random: &random)
            for parts in [1, 2, 7] { Self.check(map, changes, id: { $0 }, parts: parts, seed: seed) }
        }
    }

    @Test("hashed keys, colliding keys and keys sharing most hash bits", arguments: KeyShape.allCases)
    func collidingKeys(shape: KeyShape) {
        for seed in UInt64(1)...3 {
            var random = SeededRandom(seed: seed)
            let size = shape == .constant ? 200 : 3_000
            var map = PersistentMap<Collider, Int>()
            for i in 0..<size { map[shape.key(i)] = i }
            let changes = Self.changes(
                of: map,
                absent: { shape.key(size + $0 % 4_000) },
                count: 2_500,
                failing: 0,
                random: &random
            )
            Self.check(map, changes, id: \.id, parts: 4, seed: seed)
        }
    }

    /// A small map's root holds entries of its own: changes under their
    /// slots wait for the subtries' tasks, and may fail before theirs.
    @Test(
        "a change that throws: the first one in the changes' order is reported, and the map stays valid",
        arguments: [40, 4_000]
    )
    func failures(size: Int) {
        for seed in UInt64(1)...8 {
            var random = SeededRandom(seed: seed)
            var map = PersistentMap<Int, Int>()
            for i in 0..<size { map[i * 3] = i }
            let changes = Self.changes(
                of: map,
                absent: { $0 * 3 + 1 },
                count: 3_000,
                failing: 1 + Int(seed % 4),
                random: &random
            )
            Self.check(map, changes, id: { $0 }, parts: 4, seed: seed)
        }
    }

    @Test("a map held nowhere else changes in place, and every value is released once")
    func uniqueAndReleased() throws {
        let life = SharedLiveCount()
        do {
            var map = PersistentMap<Int, SharedTracked>()
            for i in 0..<5_000 { map[i] = SharedTracked(life) }
            var changes = PersistentMap<Int, Int>()
            for i in stride(from: 0, to: 10_000, by: 2) { changes[i] = i }
            let replacements = (0..<10_000).map { _ in SharedTracked(life) }
            // A value found is held by the map alone (no node on its path
            // was copied, so none retains it twice).
            let results = try map.update(with: changes, maximumParts: 4) { key, _, value -> (Bool, Bool) in
                let found = (value != nil, isKnownUniquelyReferenced(&value))
                value = key % 4 == 0 ? nil : replacements[key]
                return found
            }
            #expect(results.count == 5_000)
            #expect(results.filter { $0.0 }.count == 2_500)
            #expect(results.allSatisfy { $0.0 == $0.1 })
            map._invariantCheck()
            // Kept: odd keys below 5,000 (2,500), keys 2 mod 4 below 10,000 (2,500).
            #expect(map.count == 5_000)
            for i in 0..<10_000 {
                let expected: SharedTracked? =
                    i % 4 == 0 ? nil : i % 2 == 1 ? (i < 5_000 ? map[i] : nil) : replacements[i]
                #expect(map[i] === expected)
            }
        }
        #expect(life.value == 0)
    }

    @Test("every entry removed: the map is empty")
    func removeAll() throws {
        var map = PersistentMap<Int, Int>()
        for i in 0..<3_000 { map[i] = i }
        var changes = PersistentMap<Int, Bool>()
        for i in 0..<3_000 { changes[i] = true }
        _ = try map.update(with: changes, maximumParts: 4) { _, _, value in value = nil }
        map._invariantCheck()
        #expect(map.isEmpty)
        #expect(map == PersistentMap())
    }
}
