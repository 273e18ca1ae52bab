import PersistentCollections
import Testing

@Suite("PersistentMap difference")
struct PersistentMapDifferenceTests {
    static func modelDifference(
        _ old: [Collider: Int],
        _ new: [Collider: Int]
    ) -> (inserted: Set<Collider>, removed: Set<Collider>, changed: Set<Collider>) {
        let inserted = Set(new.keys.filter { old[$0] == nil })
        let removed = Set(old.keys.filter { new[$0] == nil })
        let changed = Set(new.keys.filter { old[$0] != nil && old[$0] != new[$0] })
        return (inserted, removed, changed)
    }

    @Test("difference(from:) matches a model diff", arguments: KeyShape.allCases, [UInt64(1), 2, 3, 4])
    func againstModel(shape: KeyShape, seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let size = shape == .constant ? 40 : 1_500
        var base = PersistentMap<Collider, Int>()
        var baseModel: [Collider: Int] = [:]
        for id in 0..<size {
            base[shape.key(id)] = id
            baseModel[shape.key(id)] = id
        }
        for round in 0..<20 {
            var new = base
            var newModel = baseModel
            for _ in 0..<random.int(below: 60) {
                let key = shape.key(random.int(below: size * 2))
                switch random.int(below: 3) {
                case 0:
                    new[key] = nil
                    newModel[key] = nil
                case 1:
                    new[key] = random.int(below: 5)
                    newModel[key] = new[key]
                default:
                    new[key] = newModel[key]  // rewrite the same value: no change
                }
            }
            let difference = new.difference(from: base)
            let expected = Self.modelDifference(baseModel, newModel)
            let context = "shape \(shape) seed \(seed) round \(round)"
            #expect(Set(difference.inserted) == expected.inserted, "\(context)")
            #expect(Set(difference.removed) == expected.removed, "\(context)")
            #expect(Set(difference.changed) == expected.changed, "\(context)")
            #expect(difference.inserted.count == expected.inserted.count, "no duplicates, \(context)")
            #expect(difference.removed.count == expected.removed.count, "no duplicates, \(context)")
            #expect(difference.changed.count == expected.changed.count, "no duplicates, \(context)")
            // Diffing independently built maps gives the same answer.
            let rebuilt = PersistentMap(uniqueKeysWithValues: newModel.map { ($0.key, $0.value) })
            let again = rebuilt.difference(from: base)
            #expect(Set(again.inserted) == expected.inserted && Set(again.changed) == expected.changed, "\(context)")
            #expect(new.difference(from: new).isEmpty)
        }
    }

    @Test("difference against empty maps")
    func emptySides() {
        let map: PersistentMap<Int, Int> = [1: 1, 2: 2]
        let empty = PersistentMap<Int, Int>()
        #expect(Set(map.difference(from: empty).inserted) == [1, 2])
        #expect(Set(empty.difference(from: map).removed) == [1, 2])
        #expect(empty.difference(from: empty).isEmpty)
    }
}
