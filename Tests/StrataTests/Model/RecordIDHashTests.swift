import DeterministicRandom
import Foundation
import PersistentCollections
import Testing

@testable import Strata

@Suite("RecordID hashing")
struct RecordIDHashTests {
    @Test("an integer ID's hashValue is a fixed mix of the integer, the same in every process")
    func integerHashIsFixed() {
        // murmur3's 64-bit finalizer; these are its outputs, so a change of
        // the function (or the seeded hasher taking over) shows here.
        #expect(RecordID(0).hashValue == 0)
        #expect(RecordID(1).hashValue == -5_451_962_507_482_445_012)
        #expect(RecordID(2).hashValue == 4_233_148_493_373_801_447)
        #expect(RecordID(-1).hashValue == 7_256_831_767_414_464_289)
        #expect(RecordID(1_000_000).hashValue == 4_916_551_097_864_136_739)
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
        #expect(sequential._maximumDepth > 3)
    }
}
