import PersistentCollections
import Testing

@Suite("Footprint")
struct FootprintTests {
    /// A map of `count` keys whose values are arrays of `width` bytes.
    static func map(_ count: Int, width: Int = 40) -> PersistentMap<Int, [UInt8]> {
        PersistentMap(
            uniqueKeysWithValues: (0..<count).map { ($0, [UInt8](repeating: UInt8($0 & 0xFF), count: width)) }
        )
    }

    static func count(_ map: PersistentMap<Int, [UInt8]>, in counter: FootprintCounter) -> Footprint {
        map.footprint(in: counter) { _, value in counter.countArray(value) }
    }

    @Test("a map alone is all unique, and about its elements' size; counted again it is all shared")
    func alone() {
        let map = Self.map(10_000)
        let counter = FootprintCounter()
        let first = Self.count(map, in: counter)
        #expect(first.shared == 0)
        // Every value's buffer (32-byte header + 40 bytes) plus at least one 8-byte key per item.
        #expect(first.unique >= 10_000 * (72 + 8) && first.unique <= 10_000 * 400, "\(first)")
        let again = Self.count(map, in: counter)
        #expect(again == Footprint(unique: 0, shared: first.unique))
        #expect(PersistentMap<Int, [UInt8]>().footprint(in: counter) == Footprint())
    }

    @Test("versions cost only the paths their changes copied", arguments: [UInt64(1), 2, 3])
    func versions(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        let base = Self.map(20_000)
        var versions = [base]
        for _ in 0..<50 {
            var next = versions.last!
            let key = random.int(below: 30_000)
            if random.int(below: 4) == 0 {
                next.removeValue(forKey: key)
            } else {
                next[key] = [UInt8](repeating: 7, count: 40)
            }
            versions.append(next)
        }
        let counter = FootprintCounter()
        let newest = Self.count(versions.last!, in: counter)
        var added = 0
        for version in versions.dropLast().reversed() {
            let footprint = Self.count(version, in: counter)
            // One change copies at most a root-to-leaf path of small nodes and one value.
            #expect(footprint.unique <= 8 * 1_400, "seed \(seed): \(footprint)")
            #expect(footprint.shared >= newest.unique / 2, "seed \(seed): \(footprint)")
            added += footprint.unique
        }
        #expect(added > 0 && added < newest.unique / 10, "seed \(seed): 50 versions add \(added)")

        // A map with the same contents built separately shares nothing.
        let rebuilt = PersistentMap(uniqueKeysWithValues: versions.last!.map { ($0.key, Array($0.value)) })
        let separate = Self.count(rebuilt, in: FootprintCounter())
        #expect(separate.shared == 0 && separate.unique > newest.unique / 2)
    }

    @Test("array buffers count once until a copy is mutated")
    func arrays() {
        let counter = FootprintCounter()
        let array = [UInt8](repeating: 1, count: 100)
        var copy = array
        let first = counter.countArray(array)
        #expect(first.unique >= 132 && first.shared == 0)
        #expect(counter.countArray(copy) == Footprint(shared: first.unique))
        // `array` must outlive the mutation, or `copy` is unique and mutates in place.
        withExtendedLifetime(array) {
            copy[0] = 2
            #expect(counter.countArray(copy).unique >= 132)
        }
        #expect(counter.countArray([UInt8]()) == Footprint())
    }

    @Test(
        "nodeBytes(notSharedWith:) walks only the differences and agrees with the counter",
        arguments: [UInt64(4), 5]
    )
    func nodeBytesNotShared(seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var versions = [Self.map(5_000)]
        for _ in 0..<40 {
            var next = versions.last!
            for _ in 0..<(1 + random.int(below: 20)) {
                let key = random.int(below: 8_000)
                if random.int(below: 3) == 0 { next.removeValue(forKey: key) } else { next[key] = [1] }
            }
            versions.append(next)
        }
        let empty = PersistentMap<Int, [UInt8]>()
        for (old, new) in zip(versions, versions.dropFirst()) {
            let counter = FootprintCounter()
            _ = new.footprint(in: counter)
            let expected = old.footprint(in: counter).unique
            #expect(old.nodeBytes(notSharedWith: new) == expected, "seed \(seed)")
            #expect(old.nodeBytes(notSharedWith: empty) == old.footprint(in: FootprintCounter()).unique)
            #expect(old.nodeBytes(notSharedWith: old) == 0)
        }
        #expect(empty.nodeBytes(notSharedWith: versions[0]) == 0)
    }

    @Test("an error thrown while measuring ends the walk at once and is rethrown")
    func allocatedBytesStopsOnThrow() {
        struct Stop: Error {}
        let map = Self.map(5_000)
        var visited = 0
        #expect(throws: Stop.self) {
            try map.allocatedBytes { value in
                visited += 1
                if visited == 100 { throw Stop() }
                return value.count
            }
        }
        #expect(visited == 100)
        // Without a throw, the walk visits every value.
        visited = 0
        let bytes = map.allocatedBytes { value in
            visited += 1
            return value.count
        }
        #expect(visited == 5_000 && bytes >= 5_000 * 40)
    }
}
