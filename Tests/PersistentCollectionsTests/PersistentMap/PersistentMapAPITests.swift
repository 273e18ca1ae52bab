import Foundation
import PersistentCollections
import Testing

@Suite("PersistentMap API")
struct PersistentMapAPITests {
    @Test("literals, init variants and basic reads")
    func construction() {
        let empty: PersistentMap<String, Int> = [:]
        #expect(empty.isEmpty && empty.count == 0 && empty["x"] == nil)
        #expect(empty.description == "[:]")
        let map: PersistentMap = ["a": 1, "b": 2, "c": 3]
        #expect(map.count == 3 && map["b"] == 2 && map["z"] == nil)
        #expect(map["z", default: 9] == 9)
        #expect(map.contains("a") && !map.contains("q"))
        let combined = PersistentMap([("a", 1), ("b", 2), ("a", 10)], uniquingKeysWith: +)
        #expect(combined == ["a": 11, "b": 2])
        #expect(Set(map.keys) == ["a", "b", "c"])
        #expect(map.values.sorted() == [1, 2, 3])
        #expect(map.keys.contains("c"))
        #expect(map.description.contains("\"b\": 2"))
        #expect(map.debugDescription.hasPrefix("PersistentMap<String, Int>("))
    }

    @Test("merge, merging, filter, mapValues, compactMapValues against Dictionary")
    func transforms() {
        var random = SeededRandom(seed: 3)
        var map = PersistentMap<Int, Int>()
        var model: [Int: Int] = [:]
        for _ in 0..<2_000 {
            let k = random.int(below: 1_500)
            let v = random.int(below: 100)
            map[k] = v
            model[k] = v
        }
        let other = PersistentMap(uniqueKeysWithValues: (1_000..<2_500).map { ($0, $0) })
        let merged = map.merging(other, uniquingKeysWith: { a, b in a * 1_000 + b })
        let mergedModel = model.merging(other.map { ($0.key, $0.value) }, uniquingKeysWith: { a, b in a * 1_000 + b })
        merged._invariantCheck()
        #expect(Dictionary(uniqueKeysWithValues: merged.map { ($0.key, $0.value) }) == mergedModel)

        let filtered = map.filter { $0.key % 3 == 0 }
        filtered._invariantCheck()
        #expect(
            Dictionary(uniqueKeysWithValues: filtered.map { ($0.key, $0.value) }) == model.filter { $0.key % 3 == 0 }
        )
        let mostlyRemoved = map.filter { $0.key % 10 == 0 }
        mostlyRemoved._invariantCheck()
        #expect(mostlyRemoved.count == model.keys.filter { $0 % 10 == 0 }.count)

        let mapped = map.mapValues { String($0) }
        mapped._invariantCheck()
        #expect(Dictionary(uniqueKeysWithValues: mapped.map { ($0.key, $0.value) }) == model.mapValues { String($0) })

        let compact = map.compactMapValues { $0 % 2 == 0 ? $0 / 2 : nil }
        compact._invariantCheck()
        #expect(
            Dictionary(uniqueKeysWithValues: compact.map { ($0.key, $0.value) })
                == model.compactMapValues { $0 % 2 == 0 ? $0 / 2 : nil }
        )
    }

    @Test("mapValues that throws part-way leaks and crashes nothing")
    func throwingMapValues() {
        struct Stop: Error {}
        let map = PersistentMap(uniqueKeysWithValues: (0..<500).map { ($0, "\($0)") })
        var calls = 0
        #expect(throws: Stop.self) {
            _ = try map.mapValues { value -> String in
                calls += 1
                if calls == 300 { throw Stop() }
                return value + "!"
            }
        }
        map._invariantCheck()
        #expect(map[299] == "299")
    }

    @Test("Collection indices walk the entries in iteration order; keys.forEach and forEach visit the same entries")
    func indices() {
        for shape in KeyShape.allCases {
            let count = shape == .constant ? 30 : 1_000
            let map = PersistentMap(uniqueKeysWithValues: (0..<count).map { (shape.key($0), $0) })
            var index = map.startIndex
            var viaIndices: [Int] = []
            var previous: PersistentMap<Collider, Int>.Index?
            while index != map.endIndex {
                if let previous { #expect(previous < index, "shape \(shape)") }
                viaIndices.append(map[index].value)
                #expect(map.index(forKey: map[index].key) == index)
                previous = index
                index = map.index(after: index)
            }
            #expect(viaIndices == map.map(\.value), "shape \(shape)")
            #expect(map.count == count)
            #expect(map.index(forKey: shape.key(count + 5)) == nil)
            #expect(Array(map.keys) == map.indices.map { map.keys[$0] })
            var viaForEach: [Collider] = []
            map.keys.forEach { viaForEach.append($0) }
            #expect(viaForEach == Array(map.keys), "shape \(shape)")
            var entries: [(key: Collider, value: Int)] = []
            map.forEach { entries.append($0) }
            #expect(entries.map(\.key) == Array(map.keys), "shape \(shape)")
            #expect(entries.map(\.value) == Array(map.values), "shape \(shape)")
            #expect(Array(map.values) == map.indices.map { map.values[$0] })
            #expect(map.endIndex > map.startIndex)
        }
        let empty = PersistentMap<Int, Int>()
        #expect(empty.startIndex == empty.endIndex)
        var visited = 0
        empty.forEach { _ in visited += 1 }
        #expect(visited == 0)
    }

    @Test("Codable round trip, and malformed input is a DecodingError")
    func codable() throws {
        let map = PersistentMap(uniqueKeysWithValues: (0..<300).map { ("key\($0)", $0 * 2) })
        let data = try JSONEncoder().encode(map)
        let back = try JSONDecoder().decode(PersistentMap<String, Int>.self, from: data)
        #expect(back == map)
        back._invariantCheck()
        let duplicate = Data(#"["a", 1, "a", 2]"#.utf8)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PersistentMap<String, Int>.self, from: duplicate)
        }
        let dangling = Data(#"["a", 1, "b"]"#.utf8)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PersistentMap<String, Int>.self, from: dangling)
        }
        let wrongType = Data(#"["a", "one"]"#.utf8)
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(PersistentMap<String, Int>.self, from: wrongType)
        }
    }

    @Test("Hashable: equal maps hash equally regardless of history")
    func hashing() {
        var a = PersistentMap<Int, Int>()
        var b = PersistentMap<Int, Int>()
        for i in 0..<100 { a[i] = i }
        for i in (0..<100).reversed() { b[i] = i }
        #expect(a == b && a.hashValue == b.hashValue)
        b[5] = 6
        #expect(a != b)
        #expect(Set([a, b, a]).count == 2)
    }

    @Test("Builder and bulk build agree with inserts")
    func builders() {
        var builder = PersistentMap<Int, Int>.Builder()
        for i in 0..<5_000 { builder[i] = i * 3 }
        #expect(builder.removeValue(forKey: 10) == 30)
        #expect(builder.updateValue(1, forKey: 11) == 33)
        let built = builder.build()
        built._invariantCheck()
        var expected = PersistentMap(uniqueKeysWithValues: (0..<5_000).map { ($0, $0 * 3) })
        expected[10] = nil
        expected[11] = 1
        #expect(built == expected)
        var continued = PersistentMap<Int, Int>.Builder(built)
        continued[99_999] = 1
        #expect(continued.count == built.count + 1)
        #expect(built[99_999] == nil)
    }

    @Test(
        "removing an absent key changes and copies nothing, from a shared map or a unique one",
        arguments: KeyShape.allCases
    )
    func removeAbsent(shape: KeyShape) {
        var random = SeededRandom(seed: 7 &+ UInt64(shape.rawValue.utf8.count))
        // Even IDs present; odd IDs (same hash slots under fewBits and
        // constant) absent, so a probe meets a different key at its slot.
        var map = PersistentMap<Collider, Int>()
        for id in stride(from: 0, to: 4_000, by: 2) { map[shape.key(id)] = id }
        let original = map
        for _ in 0..<500 {
            let absent = shape.key(2 * random.int(below: 3_000) + 1)
            #expect(map.removeValue(forKey: absent) == nil, "shape \(shape) key \(absent)")
        }
        map._invariantCheck()
        #expect(map == original && map.count == 2_000)
        // Shared all along: no node was copied for a key it did not hold.
        #expect(map.nodeBytes(notSharedWith: original) == 0, "shape \(shape)")
        // Present keys still come out, from the shared map, then unique.
        var kept: [PersistentMap<Collider, Int>] = []
        for id in stride(from: 0, to: 4_000, by: 2) {
            #expect(map.removeValue(forKey: shape.key(id)) == id, "shape \(shape) id \(id)")
            #expect(map.removeValue(forKey: shape.key(id)) == nil, "shape \(shape) id \(id) twice")
            if id % 400 == 0 { kept.append(map) }
        }
        #expect(map.isEmpty)
        #expect(original.count == 2_000 && original[shape.key(2)] == 2)
        for (n, version) in kept.enumerated() {
            version._invariantCheck()
            #expect(version.count == 2_000 - 200 * n - 1, "shape \(shape) version \(n)")
        }
    }

    @Test("isIdentical: a map and its unchanged copies, not an equal map built apart nor a changed copy")
    func identity() {
        for count in [0, 1, 17, 2_000] {
            let map = PersistentMap(uniqueKeysWithValues: (0..<count).map { ($0, $0) })
            let copy = map
            #expect(map.isIdentical(to: copy))
            #expect(
                !map.isIdentical(to: PersistentMap(uniqueKeysWithValues: (0..<count).map { ($0, $0) })) || count == 0
            )
            var changed = copy
            changed[-1] = -1
            #expect(!map.isIdentical(to: changed))
            if count > 0 {
                var replaced = copy
                replaced[count / 2] = -1
                #expect(!map.isIdentical(to: replaced))
                #expect(map == copy && map.isIdentical(to: copy))
            }
        }
    }
}
