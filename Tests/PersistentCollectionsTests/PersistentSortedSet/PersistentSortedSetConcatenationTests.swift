import PersistentCollections
import Testing

/// `init(concatenating:)` against the sorted Array the parts cut up: every
/// shape of part a snapshot's runs can have (empty, a lone underfull leaf,
/// exactly a leaf, many levels), and the joined tree still edits like any other.
@Suite("PersistentSortedSet concatenation")
struct PersistentSortedSetConcatenationTests {
    /// Cuts `0..<total` (even numbers, so inserts can land between) into
    /// parts of the sizes `random` draws from `sizes`.
    static func parts(
        total: Int,
        sizes: [Int],
        random: inout SeededRandom
    ) -> (parts: [PersistentSortedSet<Int>], model: [Int]) {
        var parts: [PersistentSortedSet<Int>] = []
        var model: [Int] = []
        var next = 0
        while next < total {
            let size = Swift.min(sizes[random.int(below: sizes.count)], total - next)
            let elements = (next..<(next + size)).map { $0 * 2 }
            // Half the parts built in bulk, half one insert at a time (other leaf fills).
            var part = PersistentSortedSet<Int>()
            if random.chance(50) {
                part = PersistentSortedSet(sortedElements: elements)
            } else {
                for element in elements.shuffled(using: &random) { part.insert(element) }
            }
            parts.append(part)
            model += elements
            next += size
            if random.chance(10) { parts.append(PersistentSortedSet()) }
        }
        return (parts, model)
    }

    @Test(
        "the joined set equals the parts' elements in order and keeps every invariant",
        arguments: [
            [0, 1, 2, 3],  // lone tiny leaves, merged again and again
            [1, 14, 15, 16, 31, 32],  // around a leaf's minimum and maximum
            [29, 30, 31, 33, 62, 500],  // a leaf and a bit, a few leaves
            [1, 5_000, 20_000],  // tall parts beside lone leaves
        ]
    )
    func joinedEqualsModel(sizes: [Int]) {
        for seed in UInt64(1)...6 {
            var random = SeededRandom(seed: seed &* 131 &+ UInt64(sizes.reduce(0, +)))
            for total in [0, 1, 15, 16, 31, 32, 33, 100, 1_000, 30_000] {
                let (parts, model) = Self.parts(total: total, sizes: sizes, random: &random)
                let joined = PersistentSortedSet(concatenating: parts)
                let context = "sizes \(sizes) seed \(seed) total \(total) parts \(parts.count)"
                joined._invariantCheck()
                #expect(joined.count == model.count, "\(context)")
                #expect(Array(joined) == model, "\(context)")
                if !model.isEmpty {
                    let offset = random.int(below: model.count)
                    #expect(joined.element(at: offset) == model[offset], "\(context)")
                    #expect(joined.rank(of: model[offset]) == offset, "\(context)")
                }
                // The parts are untouched, and the joined set edits like any other.
                #expect(Array(PersistentSortedSet(concatenating: parts)) == model, "\(context)")
                var edited = joined
                var expected = model
                for _ in 0..<200 {
                    let key = random.int(below: 2 * total + 2)
                    let at = expected.lowerBound(key)
                    if at < expected.count && expected[at] == key {
                        #expect(edited.remove(key) == key, "\(context)")
                        expected.remove(at: at)
                    } else {
                        let inserted = edited.insert(key)
                        #expect(inserted, "\(context)")
                        expected.insert(key, at: at)
                    }
                }
                edited._invariantCheck()
                #expect(Array(edited) == expected, "\(context)")
                #expect(Array(joined) == model, "the joined set is unchanged by edits of its copy, \(context)")
                for part in parts { part._invariantCheck() }
            }
        }
    }

    @Test("a builder fed ascending elements makes the set a bulk build makes, at every size around node boundaries")
    func builderEqualsBulkBuild() {
        for count in [
            0, 1, 2, 14, 15, 16, 26, 27, 28, 29, 30, 31, 32, 33, 41, 42, 46, 47, 54, 55, 62, 63, 64, 432, 433, 496,
            497, 511, 512, 6_912, 6_913, 7_937, 7_938, 20_000,
        ] {
            var builder = PersistentSortedSet<Int>.Builder()
            for element in 0..<count { builder.append(element * 3) }
            let built = builder.build()
            built._invariantCheck()
            let bulk = PersistentSortedSet(sortedElements: (0..<count).map { $0 * 3 })
            #expect(Array(built) == Array(bulk), "count \(count)")
            #expect(built == bulk, "count \(count)")
            #expect(built.count == count && (count == 0 || built.element(at: count / 2) == count / 2 * 3))
        }
    }

    @Test("no parts, or only empty ones, make the empty set")
    func emptyParts() {
        #expect(PersistentSortedSet<Int>(concatenating: []).isEmpty)
        let empties = [PersistentSortedSet<Int>(), PersistentSortedSet()]
        let joined = PersistentSortedSet(concatenating: empties)
        joined._invariantCheck()
        #expect(joined.isEmpty)
    }
}
