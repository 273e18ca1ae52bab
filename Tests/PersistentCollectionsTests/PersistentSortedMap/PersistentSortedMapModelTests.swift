import Foundation
import PersistentCollections
import Testing

/// Random operation sequences against a `Dictionary` read in key order,
/// keeping earlier versions to check that no change leaks into them.
@Suite("PersistentSortedMap against a Dictionary model")
struct PersistentSortedMapModelTests {
    static func check(_ map: PersistentSortedMap<Int, Int>, _ model: [Int: Int], _ context: @autoclosure () -> String) {
        map._invariantCheck()
        let sorted = model.sorted { $0.key < $1.key }
        #expect(map.count == model.count, "count, \(context())")
        #expect(map.map(\.key) == sorted.map(\.key) && map.map(\.value) == sorted.map(\.value), "entries, \(context())")
        #expect(map.keys == sorted.map(\.key) && map.values == sorted.map(\.value))
    }

    @Test("random updates, removals, lookups, ranks and pages", arguments: [UInt64(1), 2, 3])
    func randomSequences(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var map = PersistentSortedMap<Int, Int>()
        var model: [Int: Int] = [:]
        var kept: [(PersistentSortedMap<Int, Int>, [Int: Int])] = []
        for step in 0..<5_000 {
            let key = random.int(below: seed == 3 ? 60 : 4_000)
            let context = "seed \(seed) step \(step)"
            if random.int(below: 100) < 65 {
                let value = random.int(below: 1_000)
                #expect(
                    map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key),
                    "update, \(context)"
                )
            } else {
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key), "remove, \(context)")
            }
            #expect(map[key] == model[key] && map.contains(key) == (model[key] != nil), "lookup, \(context)")
            let sortedKeys = model.keys.sorted()
            #expect(map.rank(of: key) == sortedKeys.filter { $0 < key }.count, "rank, \(context)")
            #expect(
                map.count(in: key..<(key + 40)) == sortedKeys.filter { $0 >= key && $0 < key + 40 }.count,
                "count(in:), \(context)"
            )
            if !model.isEmpty {
                let offset = random.int(below: model.count)
                let element = map.element(at: offset)
                #expect(
                    element.key == sortedKeys[offset] && element.value == model[sortedKeys[offset]],
                    "element(at:), \(context)"
                )
                let page = map.elements(atOffsets: offset..<(offset + 10))
                #expect(page.map(\.key) == Array(sortedKeys[offset..<min(offset + 10, sortedKeys.count)]))
                let range = map.elements(in: key..<(key + 100))
                #expect(range.map(\.key) == sortedKeys.filter { $0 >= key && $0 < key + 100 }, "range, \(context)")
            }
            if step % 700 == 0 {
                Self.check(map, model, context)
                kept.append((map, model))
            }
        }
        for (version, expected) in kept { Self.check(version, expected, "kept version, seed \(seed)") }
    }

    @Test("difference reports inserted, removed and changed keys; equality, hashing and Codable")
    func differenceAndConformances() throws {
        let base = PersistentSortedMap(sortedUniqueKeysWithValues: (0..<3_000).map { ($0, $0) })
        var edited = base
        edited[5] = nil
        edited[10_000] = 1
        edited[1_500] = -1
        let difference = edited.difference(from: base)
        #expect(difference.inserted == [10_000] && difference.removed == [5] && difference.changed == [1_500])
        #expect(edited != base && base == PersistentSortedMap(sortedUniqueKeysWithValues: (0..<3_000).map { ($0, $0) }))
        #expect(Set([base, base]).count == 1)
        let data = try JSONEncoder().encode(edited)
        #expect(try JSONDecoder().decode(PersistentSortedMap<Int, Int>.self, from: data) == edited)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PersistentSortedMap<Int, Int>.self, from: Data("[2, 0, 1, 0]".utf8))
        }
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PersistentSortedMap<Int, Int>.self, from: Data("[1, 0, 2]".utf8))
        }
        #expect(PersistentSortedMap(uniqueKeysWithValues: [(1, 1), (1, 2)]) == nil)
        let literal: PersistentSortedMap = ["b": 2, "a": 1]
        #expect(literal.first! == ("a", 1) && literal.description == "[a: 1, b: 2]")
    }

    @Test("labeled pairs (a map's, a Dictionary's elements) build the map unlabeled pairs build")
    func labeledPairs() {
        let labeled = (0..<1_000).map { (key: $0 * 3, value: -$0) }
        let unlabeled = labeled.map { ($0.key, $0.value) }
        let expected = PersistentSortedMap(sortedUniqueKeysWithValues: unlabeled)
        #expect(PersistentSortedMap(sortedUniqueKeysWithValues: labeled) == expected)
        #expect(PersistentSortedMap(sortedUniqueKeysWithValues: expected) == expected)
        #expect(PersistentSortedMap(uniqueKeysWithValues: labeled.reversed()) == expected)
        let dictionary = Dictionary(uniqueKeysWithValues: unlabeled)
        #expect(PersistentSortedMap(uniqueKeysWithValues: dictionary) == expected)
        #expect(PersistentSortedMap(uniqueKeysWithValues: [(key: 1, value: 1), (key: 1, value: 2)]) == nil)
        #expect(PersistentSortedMap(sortedUniqueKeysWithValues: [(key: 2, value: "b")]).first! == (2, "b"))
    }
}
