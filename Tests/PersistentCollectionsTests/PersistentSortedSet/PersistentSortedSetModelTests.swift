import Foundation
import PersistentCollections
import Testing

/// Random operation sequences against a sorted `Array`, keeping earlier
/// versions to check that no mutation leaks into a kept copy.
@Suite("PersistentSortedSet against a sorted Array model")
struct PersistentSortedSetModelTests {
    static func check(_ set: PersistentSortedSet<Int>, _ model: [Int], _ context: @autoclosure () -> String) {
        set._invariantCheck()
        #expect(set.count == model.count, "count, \(context())")
        #expect(Array(set) == model, "iteration, \(context())")
        #expect(set.first == model.first && set.last == model.last, "ends, \(context())")
    }

    /// Where model keys come from: few distinct values (many repeats) or many.
    enum Order: CaseIterable {
        case random, ascending, descending, alternatingEnds, duplicateHeavy
    }

    @Test("random insert, remove, rank, element(at:) and ranges", arguments: Order.allCases, [UInt64(1), 2])
    func randomSequences(order: Order, seed: UInt64) {
        var random = SeededRandom(seed: seed &* 97 &+ UInt64(Order.allCases.firstIndex(of: order)!))
        var set = PersistentSortedSet<Int>()
        var model: [Int] = []
        var kept: [(PersistentSortedSet<Int>, [Int])] = []
        let steps = 6_000
        for step in 0..<steps {
            let context = "order \(order) seed \(seed) step \(step)"
            let key: Int
            switch order {
            case .random: key = random.int(below: 20_000)
            case .ascending: key = step
            case .descending: key = steps - step
            case .alternatingEnds: key = step % 2 == 0 ? step : -step
            case .duplicateHeavy: key = random.int(below: 50)
            }
            let position = model.lowerBound(key)
            let present = position < model.count && model[position] == key
            if random.int(below: 100) < 70 || model.isEmpty {
                #expect(set.insert(key) == !present, "insert \(key), \(context)")
                if !present { model.insert(key, at: position) }
            } else {
                let victim = random.chance(50) ? key : model[random.int(below: model.count)]
                let at = model.lowerBound(victim)
                let exists = at < model.count && model[at] == victim
                #expect(set.remove(victim) == (exists ? victim : nil), "remove \(victim), \(context)")
                if exists { model.remove(at: at) }
            }
            let slot = model.lowerBound(key)
            #expect(set.contains(key) == (slot < model.count && model[slot] == key), "contains, \(context)")
            #expect(set.rank(of: key) == slot, "rank, \(context)")
            if !model.isEmpty {
                let offset = random.int(below: model.count)
                #expect(set.element(at: offset) == model[offset], "element(at:), \(context)")
                let low = random.int(below: 20_000) - 1_000
                let high = low + random.int(below: 3_000)
                // The model is sorted and unique: a range is a slice between two bounds
                // (filtering the whole model at every step was most of this test's time).
                func slice(from lower: Int?, below upper: Int?) -> [Int] {
                    let start = lower.map { model.lowerBound($0) } ?? 0
                    let end = upper.map { model.lowerBound($0) } ?? model.count
                    return Array(model[start..<end])
                }
                let expected = slice(from: low, below: high)
                #expect(Array(set.elements(in: low..<high)) == expected, "range, \(context)")
                #expect(set.count(in: low..<high) == expected.count, "count(in:), \(context)")
                #expect(set.offsets(in: low..<high) == model.lowerBound(low)..<model.lowerBound(high), "\(context)")
                #expect(set.count(in: low...high) == slice(from: low, below: high + 1).count)
                let single = model[offset]
                #expect(set.count(in: single...single) == 1 && set.count(in: single..<single) == 0, "\(context)")
                #expect(Array(set.elements(in: low..<high).reversed()) == expected.reversed(), "reversed, \(context)")
                #expect(Array(set.elements(in: low...high)) == slice(from: low, below: high + 1))
                #expect(Array(set.elements(from: low)) == slice(from: low, below: nil))
                #expect(Array(set.elements(through: low)) == slice(from: nil, below: low + 1))
                #expect(Array(set.elements(upTo: low)) == slice(from: nil, below: low))
                let window = offset..<(offset + random.int(below: 80))
                var chunked: [Int] = []
                set.forEachChunk(inOffsets: window, descending: step % 2 == 1) { chunk in
                    chunked.append(contentsOf: step % 2 == 1 ? chunk.reversed() : Array(chunk))
                    return true
                }
                let inWindow = model[window.clamped(to: 0..<model.count)]
                #expect(chunked == (step % 2 == 1 ? inWindow.reversed() : Array(inWindow)), "chunks, \(context)")
            }
            if step % 500 == 0 {
                Self.check(set, model, context)
                kept.append((set, model))
            }
        }
        Self.check(set, model, "order \(order) seed \(seed) end")
        for (version, expected) in kept { Self.check(version, expected, "kept version, order \(order) seed \(seed)") }
        // Remove everything, in a random order.
        var shuffled = model
        shuffled.shuffle(using: &random)
        for (i, key) in shuffled.enumerated() {
            #expect(set.remove(key) == key)
            if i % 997 == 0 { set._invariantCheck() }
        }
        #expect(set.isEmpty && Array(set).isEmpty)
        for (version, expected) in kept { Self.check(version, expected, "kept after emptying, order \(order)") }
    }

    @Test("sizes around node boundaries: bulk build equals insertion one by one")
    func boundarySizes() {
        // Leaves hold 28 Ints at most (a 256-byte allocation) and are built
        // with 27; internal nodes 16 children.
        let small: [Int] = [0, 1, 2, 26, 27, 28, 29, 31, 32, 33, 40, 41, 42, 53, 54, 55, 56, 57, 63, 64, 65]
        let middle: [Int] = [127, 128, 129, 432, 433, 447, 448, 449, 450, 2_047, 2_048, 2_049, 4_095, 4_096]
        let large: [Int] = [4_097, 6_912, 6_913, 6_927, 7_168, 7_169, 110_592, 110_593, 131_073]
        for size in small + middle + large {
            let elements = (0..<size).map { $0 * 3 }
            let built = PersistentSortedSet(sortedElements: elements)
            built._invariantCheck()
            #expect(Array(built) == elements, "size \(size)")
            if size <= 4_097 {
                var inserted = PersistentSortedSet<Int>()
                for element in elements.reversed() { inserted.insert(element) }
                inserted._invariantCheck()
                #expect(inserted == built, "size \(size)")
            }
            for offset in stride(from: 0, to: size, by: Swift.max(1, size / 50)) {
                #expect(built.element(at: offset) == elements[offset] && built.rank(of: elements[offset]) == offset)
            }
            var chunks: [Int] = []
            built.forEachChunk { chunk in
                chunks.append(contentsOf: chunk)
                return true
            }
            #expect(chunks == elements)
        }
    }

    @Test("every size up to 28 leaves, bulk built or appended: each node at least its minimum, every insert then kept")
    func everySmallSize() {
        for size in 0...750 {
            let elements = (0..<size).map { $0 * 2 }
            let built = PersistentSortedSet(sortedElements: elements)
            var builder = PersistentSortedSet<Int>.Builder()
            for element in elements { builder.append(element) }
            let appended = builder.build()
            built._invariantCheck()
            appended._invariantCheck()
            #expect(built == appended && Array(built) == elements, "size \(size)")
            // Inserts into the room left in each leaf, and past it.
            let step = Swift.max(1, size / 10)
            let odds: [Int] = Array(stride(from: 0, to: size, by: step)).map { 2 * $0 + 1 }
            var grown = built
            for odd in odds { grown.insert(odd) }
            grown._invariantCheck()
            #expect(built.count == size && Array(built) == elements, "size \(size): the built set unchanged")
            #expect(Array(grown) == (elements + odds).sorted(), "size \(size)")
        }
    }

    @Test("count(in:) and offsets(in:) equal the model's for ranges within a leaf, across leaves and across subtrees")
    func countInRanges() {
        var random = SeededRandom(seed: 41)
        // One leaf, two levels, three levels, four levels (16 children per
        // internal node, about 30 elements per leaf).
        for size in [1, 29, 31, 500, 20_000, 300_000] {
            let elements = (0..<size).map { $0 * 2 }
            let set = PersistentSortedSet(sortedElements: elements)
            for round in 0..<300 {
                // Narrow ranges (the bounds share most of their path), wide
                // ones (they part at the root), bounds between elements, on
                // them and outside the set.
                let width = round % 3 == 0 ? random.int(below: 8) : random.int(below: 2 * size + 4)
                let low = random.int(below: 2 * size + 4) - 2
                let high = low + width
                let expected = elements.lowerBound(high) - elements.lowerBound(low)
                #expect(set.count(in: low..<high) == expected, "size \(size) \(low)..<\(high)")
                #expect(set.offsets(in: low..<high) == elements.lowerBound(low)..<elements.lowerBound(high))
                let through = elements.lowerBound(high + 1) - elements.lowerBound(low)
                #expect(set.count(in: low...high) == through, "size \(size) \(low)...\(high)")
            }
            #expect(set.count(in: Int.min..<Int.max) == size)
        }
        #expect(PersistentSortedSet<Int>().count(in: 0..<10) == 0)
    }

    @Test("count(in:) on strings, with bounds parting at every height (the two descents below taken in step)")
    func countInStringRanges() {
        var random = SeededRandom(seed: 43)
        for size in [40, 700, 30_000] {
            // Strings of different lengths, some longer than inline storage.
            let elements = (0..<size).map { "key \(String(repeating: "x", count: $0 % 23)) \($0 * 2)" }.sorted()
            let set = PersistentSortedSet(sortedElements: elements)
            for round in 0..<200 {
                let i = random.int(below: size)
                let j = Swift.min(size - 1, i + (round % 2 == 0 ? random.int(below: 40) : random.int(below: size)))
                // Bounds between elements (a suffix sorts just after one) and on them.
                let low = round % 4 == 0 ? elements[i] + "!" : elements[i]
                let high = elements[j]
                guard low <= high else { continue }
                let expected = elements.lowerBound(high) - elements.lowerBound(low)
                #expect(set.count(in: low..<high) == expected, "size \(size) seed 43 round \(round)")
                #expect(set.offsets(in: low..<high) == elements.lowerBound(low)..<elements.lowerBound(high))
            }
        }
    }

    @Test(
        "count(in:) and offsets(in:) with bounds on every element, removed ones included (separators no longer elements)"
    )
    func countWithStaleSeparators() {
        var random = SeededRandom(seed: 43)
        // Inserted in random order, then two thirds removed: leaves are
        // part full and many separators name elements that are gone.
        var keys = Array(0..<30_000)
        keys.shuffle(using: &random)
        var set = PersistentSortedSet<Int>()
        for key in keys { set.insert(key) }
        for key in keys.prefix(20_000) { set.remove(key) }
        set._invariantCheck()
        let model = Array(set)
        for low in stride(from: -1, through: 30_001, by: 7) {
            let high = low + random.int(below: 200)
            let expected = model.lowerBound(high) - model.lowerBound(low)
            #expect(set.count(in: low..<high) == expected, "\(low)..<\(high)")
            #expect(set.offsets(in: low..<high) == model.lowerBound(low)..<model.lowerBound(high), "\(low)..<\(high)")
            #expect(set.count(in: low...high) == model.lowerBound(high + 1) - model.lowerBound(low), "\(low)...\(high)")
            #expect(set.count(in: low...low) == (model.lowerBound(low + 1) - model.lowerBound(low)), "\(low)...\(low)")
        }
        #expect(set.count(in: Int.min...Int.max) == model.count)
        #expect(set.offsets(in: 40_000..<50_000) == model.count..<model.count)
        let empty = PersistentSortedSet<Int>()
        #expect(empty.offsets(in: 0..<5) == 0..<0 && empty.count(in: 0...5) == 0)
    }

    @Test("difference lists what one version inserted and removed relative to another")
    func difference() {
        var random = SeededRandom(seed: 44)
        let base = PersistentSortedSet(sortedElements: (0..<5_000).map { $0 * 2 })
        var edited = base
        var inserted: Set<Int> = []
        var removed: Set<Int> = []
        for _ in 0..<300 {
            let key = random.int(below: 10_000)
            if edited.contains(key) {
                edited.remove(key)
                if inserted.remove(key) == nil { removed.insert(key) }
            } else {
                edited.insert(key)
                if removed.remove(key) == nil { inserted.insert(key) }
            }
        }
        let difference = edited.difference(from: base)
        #expect(difference.inserted == inserted.sorted())
        #expect(difference.removed == removed.sorted())
        #expect(base.difference(from: base) == ([], []))
    }

    @Test("every version kept: edits of shared trees (path copies, splits, merges, borrows) never leak")
    func everyVersionKept() {
        var random = SeededRandom(seed: 71)
        var set = PersistentSortedSet(sortedElements: (0..<3_000).map { $0 * 2 })
        var model = (0..<3_000).map { $0 * 2 }
        var versions: [(PersistentSortedSet<Int>, [Int])] = []
        for step in 0..<1_500 {
            // Long runs of removals then insertions drive nodes below the
            // minimum and above the maximum while their siblings are shared.
            let removing = (step / 250) % 2 == 0
            if removing, !model.isEmpty {
                let victim = model[random.int(below: model.count)]
                #expect(set.remove(victim) == victim, "step \(step)")
                model.remove(at: model.lowerBound(victim))
            } else {
                let key = random.int(below: 6_000)
                let position = model.lowerBound(key)
                let present = position < model.count && model[position] == key
                #expect(set.update(with: key) == (present ? key : nil), "step \(step)")
                if !present { model.insert(key, at: position) }
            }
            versions.append((set, model))
        }
        for (n, (version, expected)) in versions.enumerated() where n % 7 == 0 || n == versions.count - 1 {
            Self.check(version, expected, "version \(n)")
        }
        // Differences between any two versions equal the models' differences.
        for _ in 0..<40 {
            let (a, modelA) = versions[random.int(below: versions.count)]
            let (b, modelB) = versions[random.int(below: versions.count)]
            let difference = a.difference(from: b)
            #expect(difference.inserted == Array(Set(modelA).subtracting(modelB)).sorted())
            #expect(difference.removed == Array(Set(modelB).subtracting(modelA)).sorted())
        }
    }

    @Test("Codable round trip; unsorted or repeated elements are refused")
    func codable() throws {
        let set = PersistentSortedSet(sortedElements: Array(0..<300))
        let data = try JSONEncoder().encode(set)
        #expect(try JSONDecoder().decode(PersistentSortedSet<Int>.self, from: data) == set)
        for bad in ["[1, 3, 2]", "[1, 1]"] {
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(PersistentSortedSet<Int>.self, from: Data(bad.utf8))
            }
        }
        #expect(Set([set, set]).count == 1)
        #expect(PersistentSortedSet([3, 1, 2, 3]) == [1, 2, 3])
    }
}

extension Array where Element: Comparable {
    /// The first position whose element is ≥ `key` (the array is sorted).
    func lowerBound(_ key: Element) -> Int {
        var low = 0
        var high = count
        while low < high {
            let middle = (low + high) / 2
            if self[middle] < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

#if DEBUG
/// The debug checks of sorted input, across a leaf's boundary too (a
/// cold review found that the first element of a leaf was compared with
/// the first of the leaf before, not its last).
@Suite("PersistentSortedSet: sorted input checked in debug builds")
struct PersistentSortedSetSortedInputTests {
    @Test("init(sortedElements:) and the builder trap on disorder or a repeat at any position")
    func trapsAnywhere() async {
        // Positions around the first leaf's end: built with 27 Ints, at
        // most 28.
        for position in [1, 2, 26, 27, 28, 29, 30, 53, 54, 55, 56] {
            var ascending = Array(0..<60)
            ascending.swapAt(position - 1, position)
            var repeated = Array(0..<60)
            repeated[position] = repeated[position - 1]
            for input in [ascending, repeated] {
                await #expect(processExitsWith: .failure, "init, position \(position)") { [input = input as [Int]] in
                    _ = PersistentSortedSet(sortedElements: input)
                }
                await #expect(processExitsWith: .failure, "builder, position \(position)") { [input = input as [Int]] in
                    var builder = PersistentSortedSet<Int>.Builder()
                    for element in input { builder.append(element) }
                    _ = builder.build()
                }
            }
        }
        // Sorted input of every size through two leaves builds.
        for size in 0...60 {
            #expect(Array(PersistentSortedSet(sortedElements: 0..<size)) == Array(0..<size))
        }
    }
}
#endif
