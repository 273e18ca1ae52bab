import Foundation
import PersistentCollections
import Testing

/// Review of issue 14's B+tree, read cold: node-boundary sizes, versions
/// kept across every kind of edit, ranges at and beyond the ends, views in
/// both directions, difference between unrelated and related versions,
/// Codable of hostile input, hashing against equality, and whether a value
/// removed from the tree is released.
@Suite("PersistentSortedSet and PersistentSortedMap: review of issue 14")
struct SortedReviewTests {
    /// An object whose lifetime a test watches through a weak reference.
    final class Payload: Sendable {
        let id: Int
        init(_ id: Int) { self.id = id }
    }

    // MARK: Values removed from a map are released

    /// A map of 65 ascending keys (0..<65), leaves split at keys that
    /// depend on the leaf size; `watch` sees the payload of `watchedKey`.
    static func ascendingMap(watching watchedKey: Int, _ watch: (Payload) -> Void) -> PersistentSortedMap<Int, Payload>
    {
        var map = PersistentSortedMap<Int, Payload>()
        for key in 0..<65 {
            let payload = Payload(key)
            if key == watchedKey { watch(payload) }
            map[key] = payload
        }
        return map
    }

    @Test("removeValue releases the removed value, even when its key was a separator")
    func removedValueIsReleased() {
        // Watching each key in turn covers whichever keys are separators.
        for watchedKey in 0..<65 {
            weak var watched: Payload?
            var map = Self.ascendingMap(watching: watchedKey) { watched = $0 }
            #expect(watched != nil)
            map.removeValue(forKey: watchedKey)
            map._invariantCheck()
            #expect(map[watchedKey] == nil)
            #expect(watched == nil, "the removed value of key \(watchedKey) is still alive")
        }
    }

    @Test("updateValue releases the replaced value, even when its key was a separator")
    func replacedValueIsReleased() {
        for watchedKey in 0..<65 {
            weak var watched: Payload?
            var map = Self.ascendingMap(watching: watchedKey) { watched = $0 }
            map[watchedKey] = Payload(-watchedKey)
            #expect(map[watchedKey]?.id == -watchedKey)
            #expect(watched == nil, "the replaced value of key \(watchedKey) is still alive")
        }
    }

    // MARK: Sizes around node boundaries, every version kept

    static let boundarySizes = [
        0, 1, 15, 16, 17, 27, 28, 29, 30, 31, 32, 33, 56, 57, 59, 60, 61, 63, 64, 65, 255, 256, 257, 449, 511, 512,
        513, 16 * 32 * 2 + 1,
    ]

    @Test(
        "at node-boundary sizes: build, insert at both ends and the middle, remove down to empty, every version intact"
    )
    func boundarySizesKeepEveryVersion() {
        for size in Self.boundarySizes {
            let built = PersistentSortedSet(sortedElements: (0..<size).map { $0 * 2 })
            built._invariantCheck()
            var versions: [(PersistentSortedSet<Int>, [Int])] = [(built, (0..<size).map { $0 * 2 })]
            // Edits at the front, the back and the middle of a shared tree.
            for probe in [-1, 2 * size + 1, size | 1, size, 0] {
                var set = versions.last!.0
                var model = versions.last!.1
                let inserted = set.insert(probe)
                #expect(inserted == !model.contains(probe), "size \(size) insert \(probe)")
                if inserted { model.insert(probe, at: model.firstIndex { $0 > probe } ?? model.count) }
                set._invariantCheck()
                versions.append((set, model))
            }
            // Remove everything, alternately from each end and the middle.
            var set = versions.last!.0
            var model = versions.last!.1
            var step = 0
            while !model.isEmpty {
                let index = [0, model.count - 1, model.count / 2][step % 3]
                let removed = set.remove(model[index])
                #expect(removed == model[index], "size \(size) step \(step)")
                model.remove(at: index)
                if step % 7 == 0 {
                    set._invariantCheck()
                    versions.append((set, model))
                }
                step += 1
            }
            #expect(set.isEmpty && set.first == nil && set.last == nil && set.count == 0)
            for (i, (kept, expected)) in versions.enumerated() {
                kept._invariantCheck()
                #expect(Array(kept) == expected, "size \(size) version \(i)")
                #expect(kept.count == expected.count)
            }
        }
    }

    // MARK: Ranges and views at and beyond the ends

    @Test(
        "range views at, inside and outside the ends, in both directions, against the model",
        arguments: [UInt64(11), 12]
    )
    func rangesAgainstModel(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        for size in Self.boundarySizes {
            let model = (0..<size).map { $0 * 3 }
            let set = PersistentSortedSet(model)
            for _ in 0..<40 {
                let a = random.int(below: 3 * size + 10) - 5
                let b = random.int(below: 3 * size + 10) - 5
                let low = Swift.min(a, b)
                let high = Swift.max(a, b)
                let context = "seed \(seed) size \(size) range \(low) \(high)"
                let halfOpen = model.filter { $0 >= low && $0 < high }
                let closed = model.filter { $0 >= low && $0 <= high }
                #expect(Array(set.elements(in: low..<high)) == halfOpen, "\(context)")
                #expect(Array(set.elements(in: low..<high).reversed()) == halfOpen.reversed(), "\(context)")
                #expect(set.elements(in: low..<high).count == halfOpen.count, "\(context)")
                #expect(Array(set.elements(in: low...high)) == closed, "\(context)")
                #expect(Array(set.elements(in: low...high).reversed()) == closed.reversed(), "\(context)")
                #expect(Array(set.elements(from: low)) == model.filter { $0 >= low }, "\(context)")
                #expect(Array(set.elements(through: high)) == model.filter { $0 <= high }, "\(context)")
                #expect(Array(set.elements(upTo: high)) == model.filter { $0 < high }, "\(context)")
                #expect(
                    Array(set.elements(upTo: high).reversed()) == model.filter { $0 < high }.reversed(),
                    "\(context)"
                )
                let offsets = low..<high
                let expectedOffsets = offsets.clamped(to: 0..<model.count)
                #expect(Array(set.elements(atOffsets: offsets)) == Array(model[expectedOffsets]), "\(context)")
                #expect(
                    Array(set.elements(atOffsets: offsets).reversed()) == Array(model[expectedOffsets].reversed()),
                    "\(context)"
                )
                #expect(Self.chunks(of: set, offsets, descending: false) == Array(model[expectedOffsets]), "\(context)")
                #expect(
                    Self.chunks(of: set, offsets, descending: true) == Array(model[expectedOffsets].reversed()),
                    "\(context)"
                )
                #expect(set.rank(of: low) == model.filter { $0 < low }.count, "\(context)")
                #expect(set.contains(low) == model.contains(low), "\(context)")
            }
            for offset in [0, size / 2, size - 1] where size > 0 {
                #expect(set.element(at: offset) == model[offset])
            }
        }
    }

    /// The elements `forEachChunk(inOffsets:descending:_:)` yields, in the
    /// order asked for; also checks that each chunk is ascending and not
    /// empty, and that returning false stops the walk.
    static func chunks(of set: PersistentSortedSet<Int>, _ offsets: Range<Int>, descending: Bool) -> [Int] {
        var seen: [Int] = []
        set.forEachChunk(inOffsets: offsets, descending: descending) { chunk in
            #expect(!chunk.isEmpty)
            #expect(chunk.elementsEqual(chunk.sorted()))
            seen.append(contentsOf: descending ? chunk.reversed() : Array(chunk))
            return true
        }
        var calls = 0
        set.forEachChunk(inOffsets: offsets, descending: descending) { _ in
            calls += 1
            return false
        }
        #expect(calls == (seen.isEmpty ? 0 : 1))
        return seen
    }

    // MARK: difference(from:)

    @Test(
        "difference(from:) between any two versions of one history, and against an unrelated tree",
        arguments: [UInt64(21), 22]
    )
    func differenceBetweenVersions(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var set = PersistentSortedSet<Int>()
        var versions: [PersistentSortedSet<Int>] = [set]
        for step in 0..<3_000 {
            let key = random.int(below: 1_500)
            if random.chance(60) { set.insert(key) } else { set.remove(key) }
            if step % 250 == 0 { versions.append(set) }
        }
        versions.append(set)
        // An equal tree that shares no node with the history.
        versions.append(PersistentSortedSet(Array(set)))
        for new in versions {
            for old in versions {
                let (inserted, removed) = new.difference(from: old)
                let a = Set(new)
                let b = Set(old)
                #expect(inserted == a.subtracting(b).sorted(), "seed \(seed)")
                #expect(removed == b.subtracting(a).sorted(), "seed \(seed)")
            }
        }
    }

    @Test("map difference(from:) reports values changed inside shared and copied leaves")
    func mapDifferenceChangedValues() {
        var map = PersistentSortedMap<Int, Int>(sortedUniqueKeysWithValues: (0..<2_000).map { ($0, $0) })
        let before = map
        map[0] = -1  // first leaf
        map[1_999] = -1  // last leaf
        map[1_000] = 1_000  // same value: not a change
        map[2_000] = 0
        map.removeValue(forKey: 500)
        let (inserted, removed, changed) = map.difference(from: before)
        #expect(inserted == [2_000])
        #expect(removed == [500])
        #expect(changed == [0, 1_999])
    }

    // MARK: Codable, Hashable

    @Test("decoding hostile input: unsorted, repeated or odd-length input throws, sorted input builds a valid tree")
    func codableHostileInput() throws {
        let decoder = JSONDecoder()
        for text in [
            "[2,1]", "[1,1]", "[1,2,3,3]",
            "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,31]",
        ] {
            #expect(throws: DecodingError.self, "\(text)") {
                try decoder.decode(PersistentSortedSet<Int>.self, from: Data(text.utf8))
            }
        }
        for text in ["[1,\"a\",1,\"b\"]", "[2,\"a\",1,\"b\"]", "[1,\"a\",2]"] {
            #expect(throws: DecodingError.self, "\(text)") {
                try decoder.decode(PersistentSortedMap<Int, String>.self, from: Data(text.utf8))
            }
        }
        for size in Self.boundarySizes {
            let text = "[" + (0..<size).map(String.init).joined(separator: ",") + "]"
            let set = try decoder.decode(PersistentSortedSet<Int>.self, from: Data(text.utf8))
            set._invariantCheck()
            #expect(Array(set) == Array(0..<size))
            let encoded = try JSONEncoder().encode(set)
            #expect(try decoder.decode(PersistentSortedSet<Int>.self, from: encoded) == set)
        }
    }

    @Test("equal sets built differently are == and hash alike; different ones are not ==")
    func hashingMatchesEquality() {
        var random = SeededRandom(seed: 31)
        for size in Self.boundarySizes {
            let elements = (0..<size).map { $0 * 5 }
            let built = PersistentSortedSet(sortedElements: elements)
            var inserted = PersistentSortedSet<Int>()
            for element in elements.shuffled(using: &random) { inserted.insert(element) }
            // Same elements reached through removals.
            var viaRemovals = PersistentSortedSet(sortedElements: (0..<(size * 5 + 3)))
            for element in 0..<(size * 5 + 3) where element % 5 != 0 || element / 5 >= size {
                viaRemovals.remove(element)
            }
            for other in [inserted, viaRemovals] {
                #expect(other == built, "size \(size)")
                #expect(other.hashValue == built.hashValue, "size \(size)")
            }
            if size > 0 {
                var changed = built
                changed.remove(elements[size / 2])
                changed.insert(elements[size / 2] + 1)
                #expect(changed != built)
                #expect(changed.count == built.count)
            }
            let map = PersistentSortedMap(sortedUniqueKeysWithValues: elements.map { ($0, $0) })
            var other = map
            if size > 0 {
                other[elements[0]] = -1
                #expect(other != map)
                other[elements[0]] = elements[0]
            }
            #expect(other == map && other.hashValue == map.hashValue)
        }
    }

    @Test("iterating a set while mutating it in place sees the set as it was")
    func iterationIsolatedFromMutation() {
        var set = PersistentSortedSet(sortedElements: 0..<1_000)
        var seen: [Int] = []
        for element in set {
            seen.append(element)
            set.remove(element)
            set.insert(element + 1_000)
        }
        #expect(seen == Array(0..<1_000))
        #expect(Array(set) == Array(1_000..<2_000))
        set._invariantCheck()
    }
}
