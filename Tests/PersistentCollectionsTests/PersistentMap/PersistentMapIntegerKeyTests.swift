import PersistentCollections
import Testing

/// Keys of fixed-width integer types are their own hash. These tests hold
/// the map to a `Dictionary` model for key sets that a seeded hash would
/// scatter but the identity packs or stacks: dense runs, progressions,
/// keys sharing all but their top bits, the types' extremes.
@Suite("PersistentMap with integer keys")
struct PersistentMapIntegerKeyTests {
    enum Shape: CaseIterable, CustomStringConvertible {
        case dense, progression, sharedLowBits, differInTopBitsOnly, extremes, negative, random

        /// The `i`-th key of this shape; `i` is below a few thousand.
        func key(_ i: Int, _ random: inout SeededRandom) -> Int {
            switch self {
            case .dense: return i
            case .progression: return i &* 7_919 &+ 13
            case .sharedLowBits: return i << 40 | 0x12_3456
            // 4 top bits vary; the low 60 are one of a few values, so paths
            // run through every level down to the last.
            case .differInTopBitsOnly: return Int(bitPattern: UInt(i & 15) << 60 | UInt(i >> 4))
            case .extremes: return i.isMultiple(of: 2) ? Int.min + i / 2 : Int.max - i / 2
            case .negative: return -1 - i
            case .random: return Int(bitPattern: UInt(random.next()))
            }
        }

        var description: String {
            switch self {
            case .dense: return "dense"
            case .progression: return "progression"
            case .sharedLowBits: return "sharedLowBits"
            case .differInTopBitsOnly: return "differInTopBitsOnly"
            case .extremes: return "extremes"
            case .negative: return "negative"
            case .random: return "random"
            }
        }
    }

    static func check<K: FixedWidthInteger>(_ map: PersistentMap<K, Int>, _ model: [K: Int], _ context: String) {
        map._invariantCheck()
        #expect(map.count == model.count, "count, \(context)")
        #expect(map._maximumDepth <= 16, "depth \(map._maximumDepth), \(context)")
        var seen = 0
        for (key, value) in map {
            seen += 1
            #expect(model[key] == value, "entry \(key), \(context)")
        }
        #expect(seen == model.count, "iteration length, \(context)")
        for (key, value) in model { #expect(map[key] == value, "lookup \(key), \(context)") }
    }

    @Test("random sequences against a Dictionary", arguments: Shape.allCases, [UInt64(1), 2])
    func randomSequences(shape: Shape, seed: UInt64) {
        var random = SeededRandom(seed: seed &* 7_001 &+ UInt64(Shape.allCases.firstIndex(of: shape)!))
        let keys = (0..<700).map { shape.key($0, &random) }
        var map = PersistentMap<Int, Int>()
        var model: [Int: Int] = [:]
        var kept: [(PersistentMap<Int, Int>, [Int: Int])] = []
        for step in 0..<4_000 {
            let key = keys[random.int(below: keys.count)]
            let context = "shape \(shape) seed \(seed) step \(step)"
            switch random.int(below: 100) {
            case 0..<45:
                let value = random.int(below: 1_000)
                #expect(map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key), "\(context)")
            case 45..<75:
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key), "\(context)")
            case 75..<85:
                map[key, default: 0] += 1
                model[key, default: 0] += 1
            case 85..<88:
                map = map.filter { $0.value % 3 != 0 }
                model = model.filter { $0.value % 3 != 0 }
            default:
                kept.append((map, model))
            }
            if step % 250 == 0 { Self.check(map, model, context) }
        }
        Self.check(map, model, "shape \(shape) seed \(seed), end")
        for (index, version) in kept.enumerated() {
            Self.check(version.0, version.1, "kept version \(index), shape \(shape) seed \(seed)")
            let difference = map.difference(from: version.0)
            let old = version.1
            #expect(Set(difference.inserted) == Set(model.keys).subtracting(old.keys), "inserted, kept \(index)")
            #expect(Set(difference.removed) == Set(old.keys).subtracting(model.keys), "removed, kept \(index)")
            let changed = model.keys.filter { old[$0] != nil && old[$0] != model[$0] }
            #expect(Set(difference.changed) == Set(changed), "changed, kept \(index), shape \(shape) seed \(seed)")
        }
        // Bulk building the same entries gives the same (canonical) trie.
        let rebuilt = PersistentMap(uniqueKeysWithValues: model.map { ($0.key, $0.value) })
        #expect(rebuilt == map, "bulk build, shape \(shape) seed \(seed)")
    }

    @Test("dense keys fill the trie level by level")
    func denseKeysFillTheTrie() {
        let twoLevels = PersistentMap(uniqueKeysWithValues: (0..<256).map { ($0, $0) })
        #expect(twoLevels._maximumDepth == 2)
        let fourLevels = PersistentMap(uniqueKeysWithValues: (0..<65_536).map { ($0 &* 7_919 &+ 13, $0) })
        #expect(fourLevels._maximumDepth == 4)
        fourLevels._invariantCheck()
        // One key more shares its low 16 bits with a key already there.
        var fiveLevels = fourLevels
        fiveLevels[-1] = 0
        #expect(fiveLevels._maximumDepth == 5)
        // The same keys as strings are hashed: their trie is deeper.
        let hashed = PersistentMap(uniqueKeysWithValues: (0..<65_536).map { (String($0 &* 7_919 &+ 13), $0) })
        #expect(hashed._maximumDepth > 4)
    }

    @Test("keys equal in their low 60 bits make a path through every level")
    func deepestPath() {
        let map = PersistentMap(uniqueKeysWithValues: [(0, 0), (Int(bitPattern: UInt(1) << 63), 1)])
        #expect(map._maximumDepth == 16)
        map._invariantCheck()
        var removed = map
        removed[0] = nil
        #expect(removed._maximumDepth == 1, "removal collapses the path")
        removed._invariantCheck()
    }

    @Test("every width and signedness, whole domains and extremes")
    func everyWidth() {
        func roundTrip<K: FixedWidthInteger>(_ keys: [K]) {
            var map = PersistentMap<K, Int>()
            var model: [K: Int] = [:]
            for (i, key) in keys.enumerated() {
                map[key] = i
                model[key] = i
            }
            Self.check(map, model, "\(K.self), \(keys.count) keys")
            for key in keys where key.isMultiple(of: 2) {
                map[key] = nil
                model[key] = nil
            }
            Self.check(map, model, "\(K.self) after removals")
        }
        roundTrip(Array(Int8.min...Int8.max))
        roundTrip(Array(UInt8.min...UInt8.max))
        roundTrip(Array(Int16.min...Int16.max))
        roundTrip(Array(UInt16.min...UInt16.max))
        func edges<K: FixedWidthInteger>(_: K.Type) -> [K] {
            (0..<300).flatMap { i -> [K] in
                [K.min + K(i), K.max - K(i), K(i), K.isSigned ? K(truncatingIfNeeded: -1 - i) : K(i) << 8]
            }
        }
        roundTrip(Array(Set(edges(Int32.self))))
        roundTrip(Array(Set(edges(UInt32.self))))
        roundTrip(Array(Set(edges(Int64.self))))
        roundTrip(Array(Set(edges(UInt64.self))))
        roundTrip(Array(Set(edges(UInt.self))))
        roundTrip(Array(Set(edges(Int.self))))
    }
}
