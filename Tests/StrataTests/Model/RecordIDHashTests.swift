import DeterministicRandom
import Foundation
import PersistentCollections
import Strata
import Testing

@Suite("RecordID hashing")
struct RecordIDHashTests {
    /// murmur3's 64-bit finalizer, without the process's key.
    static func unkeyedMix(_ value: Int64) -> Int {
        var x = UInt64(bitPattern: value)
        x ^= x &>> 33
        x &*= 0xff51_afd7_ed55_8ccd
        x ^= x &>> 33
        x &*= 0xc4ce_b9fe_1a85_ec53
        x ^= x &>> 33
        return Int(Int64(bitPattern: x))
    }

    @Test("an integer ID's hash is a keyed mix: one per integer, whatever the width it was given in")
    func integerHashIsAKeyedBijection() {
        #expect(RecordID(7).hashValue == RecordID(Int64(7)).hashValue)
        #expect(RecordID(7).hashValue == (7 as RecordID).hashValue)
        #expect(RecordID(-3).hashValue == RecordID(-3).hashValue)
        // The process's key is mixed in: the plain finalizer's values are
        // not the hashes (they would be for a key of 0).
        #expect((1...8).contains { RecordID(Int64($0)).hashValue != Self.unkeyedMix(Int64($0)) })
        var hashes = Set<Int>()
        for n in 0..<50_000 { hashes.insert(RecordID(n).hashValue) }
        for n in 0..<50_000 { hashes.insert(RecordID(Int64(n + 1) << 32 | 0x7FF).hashValue) }
        #expect(hashes.count == 100_000, "distinct integer IDs share a hash")
    }

    @Test("IDs in steps and IDs chosen against the unkeyed mix spread over the root's subtries")
    func stepsAndChosenIDsSpread() {
        // Integers whose unkeyed mix would share its low 40 bits: the
        // inverse of the finalizer applied to multiples of 2^40.
        func unmix(_ hash: UInt64) -> Int64 {
            var x = hash
            x ^= x &>> 33
            x &*= 0x9cb4_b2f8_1293_37db  // inverse of 0xc4ceb9fe1a85ec53
            x ^= x &>> 33
            x &*= 0x4f74_430c_22a5_4005  // inverse of 0xff51afd7ed558ccd
            x ^= x &>> 33
            return Int64(bitPattern: x)
        }
        let target: UInt64 = 12_345 << 40
        #expect(Self.unkeyedMix(unmix(target)) == Int(Int64(bitPattern: target)))
        let sequential = PersistentMap(uniqueKeysWithValues: (0..<100_000).map { (RecordID($0), $0) })
        let stepped: [RecordID] = (0..<100_000).map { RecordID(Int64($0) * 1_024) }
        let high: [RecordID] = (0..<100_000).map { RecordID(Int64($0) << 32) }
        let chosenIntegers = (0..<100_000).map { unmix(UInt64($0) << 40) }
        let chosen = chosenIntegers.map { RecordID($0) }
        // The deepest path of 100k keyed hashes is set by the pair sharing
        // the longest prefix, 4 bits a level: 32 bits are shared by about
        // one pair (depth 9), 36 bits by one pair in 14 maps (depth 10), and
        // going past depth 13 takes 52 shared bits: one map in 900,000. So
        // a keyed map is held to that bound and never compared
        // with another's depth (8 for one and 10 for the other happens in
        // one run in 16). The 100k IDs chosen against the unkeyed mix would
        // share 40 bits: 10 levels of one path each, then four more.
        let bound = 13
        #expect(sequential._maximumDepth <= bound, "depth \(sequential._maximumDepth)")
        // The bound tells that pile-up: the chosen IDs filed by their
        // unkeyed mix (an `Int` key is its own hash).
        let unkeyed = PersistentMap(uniqueKeysWithValues: chosenIntegers.map { (Self.unkeyedMix($0), 0) })
        #expect(unkeyed._maximumDepth > bound, "depth \(unkeyed._maximumDepth)")
        for ids in [stepped, high, chosen] {
            let table = PersistentMap<RecordID, Int>(
                uniqueKeysWithValues: ids.enumerated().map { ($0.element, $0.offset) }
            )
            table._invariantCheck()
            #expect(table._maximumDepth <= bound, "depth \(table._maximumDepth)")
            #expect(table.parts(maximumCount: 4).count == 4)
        }
    }

    @Test("string and UUID IDs hash as their kind does, by UTF-8 bytes")
    func otherKindsUseTheHasher() {
        var hasher = Hasher()
        RecordID.Kind.string("song-7").hash(into: &hasher)
        #expect(RecordID("song-7").hashValue == hasher.finalize())
        #expect(RecordID("caf\u{E9}") != RecordID("cafe\u{301}"))
        let uuid = UUID()
        var uuidHasher = Hasher()
        RecordID.Kind.uuid(uuid).hash(into: &uuidHasher)
        #expect(RecordID(uuid).hashValue == uuidHasher.finalize())
    }

    @Test("Set, Dictionary and PersistentMap agree with a model for IDs of every kind", arguments: [UInt64(1), 2])
    func collectionsAgree(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var ids: [RecordID] = []
        for n in 0..<3_000 {
            switch random.int(below: 4) {
            case 0: ids.append(RecordID(n))
            case 1: ids.append(RecordID(Int64(bitPattern: random.next())))
            case 2: ids.append(RecordID("id-\(random.int(below: 5_000))"))
            default: ids.append(RecordID(UUID()))
            }
        }
        var map = PersistentMap<RecordID, Int>()
        var dictionary: [RecordID: Int] = [:]
        for (position, id) in ids.enumerated() {
            map[id] = position
            dictionary[id] = position
        }
        map._invariantCheck()
        #expect(map.count == dictionary.count, "seed \(seed)")
        #expect(Set(ids).count == dictionary.count, "seed \(seed)")
        for (id, position) in dictionary { #expect(map[id] == position, "\(id), seed \(seed)") }
        // Sequential integer IDs are scattered, not packed: the mix keeps
        // leaves small, so a change copies a few items, not a full node.
        let sequential = PersistentMap(uniqueKeysWithValues: (0..<32_768).map { (RecordID($0), $0) })
        sequential._invariantCheck()
        // (Packed, 32,768 keys fill four levels of 16-slot nodes.)
        #expect(sequential._maximumDepth > 4)
    }
}
