import PersistentCollections
import Testing

/// Vector and sorted-set node copies (path copies, concatenation, slicing,
/// leaf copies) with elements that count their own lives: each copy is
/// released once, and nothing outlives the collections.
@Suite("PersistentVector and PersistentSortedSet lifetimes")
struct PersistentVectorLifetimeTests {
    @Test("kept versions through updates, concatenation, slicing, inserts and removals leak nothing")
    func vectorElements() {
        let life = LiveCount()
        do {
            var random = SeededRandom(seed: 44)
            var vector = PersistentVector((0..<3_000).map { _ in Tracked(life) })
            var model = vector.map(ObjectIdentifier.init)
            var kept: [(PersistentVector<Tracked>, [ObjectIdentifier])] = []
            for step in 0..<600 {
                switch random.int(below: 6) {
                case 0:
                    let i = random.int(below: vector.count)
                    let element = Tracked(life)
                    vector[i] = element
                    model[i] = ObjectIdentifier(element)
                case 1:
                    let i = random.int(below: vector.count + 1)
                    let element = Tracked(life)
                    vector.insert(element, at: i)
                    model.insert(ObjectIdentifier(element), at: i)
                case 2 where vector.count > 100:
                    let i = random.int(below: vector.count)
                    #expect(ObjectIdentifier(vector.remove(at: i)) == model.remove(at: i), "step \(step)")
                case 3:
                    let lower = random.int(below: vector.count)
                    let upper = lower + random.int(below: vector.count - lower + 1)
                    vector = vector.subrange(lower..<upper) + vector.prefix(lower) + vector.suffix(from: upper)
                    model = Array(model[lower..<upper]) + model[..<lower] + model[upper...]
                case 4:
                    kept.append((vector, model))
                default:
                    if !kept.isEmpty { kept.remove(at: random.int(below: kept.count)) }
                }
            }
            vector._invariantCheck()
            #expect(vector.map(ObjectIdentifier.init) == model)
            for (version, expected) in kept {
                version._invariantCheck()
                #expect(version.map(ObjectIdentifier.init) == expected)
            }
        }
        #expect(life.live == 0, "\(life.live) elements outlived every vector")
    }

    /// A sorted element that keeps one `Tracked` alive per copy.
    struct Entry: Comparable {
        var key: Int
        var life: Tracked
        static func == (a: Entry, b: Entry) -> Bool { a.key == b.key }
        static func < (a: Entry, b: Entry) -> Bool { a.key < b.key }
    }

    @Test("sorted sets: kept versions, bulk builds, concatenation and removals leak nothing")
    func sortedElements() {
        let life = LiveCount()
        do {
            var random = SeededRandom(seed: 45)
            func entry(_ key: Int) -> Entry { Entry(key: key, life: Tracked(life)) }
            var set = PersistentSortedSet((0..<2_000).map { entry($0 * 2) })
            var model = Set((0..<2_000).map { $0 * 2 })
            var kept: [(PersistentSortedSet<Entry>, Set<Int>)] = []
            for step in 0..<5_000 {
                let key = random.int(below: 6_000)
                switch random.int(below: 10) {
                case 0..<4:
                    #expect((set.update(with: entry(key)) != nil) == !model.insert(key).inserted, "step \(step)")
                case 4..<7:
                    #expect((set.remove(entry(key)) != nil) == (model.remove(key) != nil), "step \(step)")
                case 7:
                    kept.append((set, model))
                case 8:
                    if !kept.isEmpty { kept.remove(at: random.int(below: kept.count)) }
                case 9 where step % 8 == 0:
                    // Rejoined from its own halves: leaves shared, levels above new.
                    let split = key
                    let below = PersistentSortedSet(set.filter { $0.key < split })
                    let above = PersistentSortedSet(set.filter { $0.key >= split })
                    set = PersistentSortedSet(concatenating: [below, above])
                default:
                    break
                }
            }
            set._invariantCheck()
            #expect(set.map(\.key) == model.sorted())
            for (version, expected) in kept {
                version._invariantCheck()
                #expect(version.map(\.key) == expected.sorted())
            }
        }
        #expect(life.live == 0, "\(life.live) elements outlived every set")
    }

    /// Concatenations gather up to 64 nodes a level (all but one child of
    /// each side, and the one or two the level below left) and the plan
    /// rebuilds some of them: trees of partial leaves (each `+ 33 elements`
    /// pushes a partial tail into the tree) and of random slices, joined
    /// and cut at many points, keep every element once and leak none.
    @Test("full seams: joins of trees of partial leaves keep and free every element", arguments: [UInt64(1), 2, 3])
    func fullSeams(seed: UInt64) {
        let life = LiveCount()
        do {
            var random = SeededRandom(seed: seed)
            func pieces(_ count: Int) -> (PersistentVector<Tracked>, [ObjectIdentifier]) {
                var vector = PersistentVector<Tracked>()
                var model: [ObjectIdentifier] = []
                for _ in 0..<count {
                    let length = random.chance(50) ? 33 : 1 + random.int(below: 1_500)
                    let piece = PersistentVector((0..<length).map { _ in Tracked(life) })
                    let start = random.int(below: length)
                    let slice = random.chance(50) ? piece : piece.suffix(from: start)
                    vector += slice
                    model += slice.map(ObjectIdentifier.init)
                }
                return (vector, model)
            }
            var kept: [(PersistentVector<Tracked>, [ObjectIdentifier])] = []
            for round in 0..<6 {
                let (left, leftModel) = pieces(20 + random.int(below: 60))
                let (right, rightModel) = pieces(20 + random.int(below: 60))
                let joined = left + right
                joined._invariantCheck()
                #expect(joined.map(ObjectIdentifier.init) == leftModel + rightModel, "round \(round), seed \(seed)")
                for _ in 0..<8 {
                    let a = random.int(below: left.count + 1)
                    let b = random.int(below: right.count + 1)
                    let cut = left.prefix(a) + right.suffix(from: b) + left.suffix(from: a)
                    cut._invariantCheck()
                    let expected = Array(leftModel[..<a]) + rightModel[b...] + leftModel[a...]
                    #expect(cut.map(ObjectIdentifier.init) == expected, "round \(round) cut \(a), \(b), seed \(seed)")
                    if random.chance(30) { kept.append((cut, expected)) }
                }
            }
            for (version, expected) in kept {
                version._invariantCheck()
                #expect(version.map(ObjectIdentifier.init) == expected, "kept version, seed \(seed)")
            }
        }
        #expect(life.live == 0, "\(life.live) elements outlived every vector, seed \(seed)")
    }
}
