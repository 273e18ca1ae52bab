import PersistentCollections
import Testing

/// Random operation sequences against `Dictionary`, keeping earlier versions
/// to check that no mutation leaks into a kept copy.
@Suite("PersistentMap against a Dictionary model")
struct PersistentMapModelTests {
    typealias Map = PersistentMap<Collider, Int>

    static func check(_ map: Map, _ model: [Collider: Int], _ context: @autoclosure () -> String) {
        map._invariantCheck()
        #expect(map.count == model.count, "count, \(context())")
        var seen = 0
        for (key, value) in map {
            seen += 1
            #expect(model[key] == value, "entry \(key), \(context())")
        }
        #expect(seen == model.count, "iteration length, \(context())")
        for (key, value) in model {
            #expect(map[key] == value, "lookup \(key), \(context())")
        }
    }

    @Test(
        "random insert, update, remove, modify, merge and filter sequences",
        arguments: KeyShape.allCases,
        [UInt64(1), 2, 3]
    )
    func randomSequences(shape: KeyShape, seed: UInt64) {
        var random = SeededRandom(seed: seed &* 1_000 &+ UInt64(shape.hashValue & 0xFF))
        let keySpace = shape == .constant ? 40 : 600
        let steps = shape == .constant ? 600 : 3_000
        var map = Map()
        var model: [Collider: Int] = [:]
        var kept: [(Map, [Collider: Int])] = []
        let context = { (step: Int) in "shape \(shape) seed \(seed) step \(step)" }
        for step in 0..<steps {
            let key = shape.key(random.int(below: keySpace))
            let value = random.int(below: 1_000_000)
            switch random.int(below: 100) {
            case 0..<35:
                #expect(
                    map.updateValue(value, forKey: key) == model.updateValue(value, forKey: key),
                    "\(context(step))"
                )
            case 35..<55:
                #expect(map.removeValue(forKey: key) == model.removeValue(forKey: key), "\(context(step))")
            case 55..<65:
                map[key] = value
                model[key] = value
            case 65..<70:
                map[key] = nil
                model[key] = nil
            case 70..<78:
                map[key]? += 1
                model[key]? += 1
            case 78..<84:
                map[key, default: 0] += value
                model[key, default: 0] += value
            case 84..<86:
                let other = (0..<random.int(below: 30)).map { _ in (shape.key(random.int(below: keySpace)), 1) }
                map.merge(other, uniquingKeysWith: +)
                model.merge(other, uniquingKeysWith: +)
            case 86..<87:
                let modulus = 2 + random.int(below: 5)
                map = map.filter { $0.value % modulus != 0 }
                model = model.filter { $0.value % modulus != 0 }
            case 87..<89:
                // `_modify` that removes through the optional.
                map[key] = map[key].flatMap { $0.isMultiple(of: 2) ? nil : $0 }
                model[key] = model[key].flatMap { $0.isMultiple(of: 2) ? nil : $0 }
            default:
                kept.append((map, model))
            }
            if step % 97 == 0 { Self.check(map, model, context(step)) }
        }
        Self.check(map, model, context(steps))
        for (index, version) in kept.enumerated() {
            Self.check(version.0, version.1, "kept version \(index), shape \(shape) seed \(seed)")
        }
    }

    @Test("modify in place through optional chaining and removal to nil", arguments: KeyShape.allCases)
    func modifyAccessor(shape: KeyShape) {
        var map = PersistentMap<Collider, [Int]>()
        var model: [Collider: [Int]] = [:]
        for id in 0..<200 {
            map[shape.key(id % 50), default: []].append(id)
            model[shape.key(id % 50), default: []].append(id)
        }
        let snapshot = map
        for id in 0..<50 where id.isMultiple(of: 3) {
            map[shape.key(id)]?.removeAll()
            model[shape.key(id)]?.removeAll()
        }
        for id in 0..<50 where id.isMultiple(of: 4) {
            // Setting nil inside `_modify` removes the key.
            withModify(&map[shape.key(id)]) { $0 = nil }
            model[shape.key(id)] = nil
        }
        map._invariantCheck()
        #expect(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }) == model)
        #expect(snapshot.count == 50)
        #expect(snapshot[shape.key(0)] == [0, 50, 100, 150])
    }

    func withModify<T>(_ value: inout T, _ body: (inout T) -> Void) { body(&value) }

    @Test("removing every key in random order returns to empty", arguments: KeyShape.allCases)
    func removeAll(shape: KeyShape) {
        var random = SeededRandom(seed: 77)
        var map = Map()
        let count = shape == .constant ? 60 : 2_000
        for id in 0..<count { map[shape.key(id)] = id }
        var ids = Array(0..<count)
        ids.shuffle(using: &random)
        let full = map
        for (n, id) in ids.enumerated() {
            #expect(map.removeValue(forKey: shape.key(id)) == id)
            if n % 50 == 0 { map._invariantCheck() }
        }
        #expect(map.isEmpty)
        map._invariantCheck()
        #expect(full.count == count)
        full._invariantCheck()
    }

    @Test("canonical shape: the same contents built in any order are equal and identical in shape")
    func canonicalShape() {
        var random = SeededRandom(seed: 5)
        for shape in KeyShape.allCases {
            let ids = Array(0..<300)
            var a = Map()
            for id in ids { a[shape.key(id)] = id }
            var b = Map()
            for id in ids.shuffled(using: &random) { b[shape.key(id)] = id }
            // Add and remove extra keys so b's history differs.
            for id in 300..<400 { b[shape.key(id)] = id }
            for id in 300..<400 { b[shape.key(id)] = nil }
            b._invariantCheck()
            #expect(a == b, "shape \(shape)")
            #expect(a.hashValue == b.hashValue, "shape \(shape)")
            let c = Map(uniqueKeysWithValues: ids.map { (shape.key($0), $0) })
            c._invariantCheck()
            #expect(a == c, "bulk build, shape \(shape)")
            var d = a
            d[shape.key(7)] = -1
            #expect(a != d)
            d[shape.key(7)] = 7
            #expect(a == d)
        }
    }
}
