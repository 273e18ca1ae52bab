import DeterministicRandom
import Foundation
import PersistentCollections
import Strata
import Testing

@Suite("Table IDs in ID order")
struct TableSortingTests {
    /// The model: every ID, sorted with the documented order spelled out
    /// (UUIDs by their strings, as `<` was first written).
    static func model(_ table: Table) -> [RecordID] {
        func precedes(_ a: RecordID, _ b: RecordID) -> Bool {
            switch (a.kind, b.kind) {
            case let (.integer(x), .integer(y)): return x < y
            case let (.string(x), .string(y)): return Array(x.utf8).lexicographicallyPrecedes(Array(y.utf8))
            case let (.uuid(x), .uuid(y)): return x.uuidString < y.uuidString
            case (.integer, _): return true
            case (.string, .uuid): return true
            default: return false
            }
        }
        return table.records.keys.sorted(by: precedes)
    }

    static func table(_ ids: some Sequence<RecordID>) -> Table {
        var records = PersistentMap<RecordID, Record>()
        for id in ids { records[id] = Record(["n": .string("\(id)")]) }
        return Table(records: records)
    }

    static func check(_ table: Table, seed: UInt64, _ what: String) {
        let sorted = table.sortedIDs()
        let expected = Self.model(table)
        #expect(sorted.count == expected.count, "seed \(seed): \(what)")
        #expect(sorted == expected, "seed \(seed): \(what): IDs out of order")
    }

    @Test(
        "integer IDs of every span sort by value: dense, sparse, negative, the extremes",
        arguments: [1, 2, 3, 4, 5, 6]
    )
    func integerIDs(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        // Small and large tables, and spans of one to six radix passes.
        for count in [0, 1, 2, 17, 16_383, 16_384, 40_000] {
            // Consecutive IDs (from a random start, maybe negative), or
            // IDs drawn from a span at least twice the count.
            let spans: [Int64] = [1 << 11, 1 << 22, 1 << 40, .max].filter { $0 > 2 * Int64(count) }
            let dense = random.int(below: spans.count + 1) == spans.count
            let span = dense ? Int64(count) : spans[random.int(below: spans.count)]
            var ids = Set<Int64>()
            if dense {
                let start = Int64(random.int(below: 1 << 20)) - (1 << 19)
                ids = Set((0..<Int64(count)).map { start + $0 })
            }
            while ids.count < count {
                ids.insert(
                    span == .max ? Int64(bitPattern: random.next()) : Int64(random.int(below: Int(span))) - span / 2
                )
            }
            if count > 2, random.int(below: 2) == 0 {
                ids.insert(.min)
                ids.insert(.max)
            }
            Self.check(Self.table(ids.map { RecordID($0) }), seed: seed, "\(ids.count) integers over a span of \(span)")
        }
    }

    @Test("string and UUID IDs, and all three kinds mixed, sort as RecordID's order says", arguments: [7, 8, 9])
    func otherIDs(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let words = ["", "a", "B", "é", "e\u{301}", "Zoë", "😀", "song-1", "song-10", "song-2"]
        var ids: [RecordID] = []
        for _ in 0..<20_000 {
            switch random.int(below: 3) {
            case 0: ids.append(RecordID(Int64(random.int(below: 1_000_000)) - 500_000))
            case 1: ids.append(RecordID(words[random.int(below: words.count)] + "\(random.int(below: 100_000))"))
            default:
                var bytes = [UInt8](repeating: 0, count: 16)
                for i in bytes.indices { bytes[i] = UInt8(truncatingIfNeeded: random.next()) }
                // A few share their first bytes, so the order reads past them.
                if random.int(below: 4) == 0 {
                    bytes.replaceSubrange(0..<12, with: [UInt8](repeating: 0xAB, count: 12))
                }
                ids.append(
                    RecordID(
                        UUID(
                            uuid: (
                                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                            )
                        )
                    )
                )
            }
        }
        Self.check(Self.table(ids), seed: seed, "mixed kinds")
        Self.check(Self.table(ids.filter { if case .uuid = $0.kind { true } else { false } }), seed: seed, "UUIDs")
        Self.check(Self.table(ids.filter { if case .string = $0.kind { true } else { false } }), seed: seed, "strings")
    }

    @Test("two UUIDs compare as their strings do, for every pair of byte values in one position")
    func uuidOrderIsTheStringOrder() {
        for position in [0, 5, 15] {
            for a in 0...255 {
                for b in stride(from: 0, through: 255, by: 3) {
                    var x: [UInt8] = Array(repeating: 0x5A, count: 16)
                    var y = x
                    x[position] = UInt8(a)
                    y[position] = UInt8(b)
                    let u = RecordID(
                        UUID(
                            uuid: (
                                x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13],
                                x[14], x[15]
                            )
                        )
                    )
                    let v = RecordID(
                        UUID(
                            uuid: (
                                y[0], y[1], y[2], y[3], y[4], y[5], y[6], y[7], y[8], y[9], y[10], y[11], y[12], y[13],
                                y[14], y[15]
                            )
                        )
                    )
                    guard case .uuid(let p) = u.kind, case .uuid(let q) = v.kind else { continue }
                    #expect((u < v) == (p.uuidString < q.uuidString), "bytes \(a) and \(b) at \(position)")
                }
            }
        }
    }
}
