import Foundation
import Strata
import Testing

/// A query's results read each record ID from its index entry past the
/// equalities' bytes, and past the later values without copying the entry
/// when they have a fixed size. Here every kind of value sits in every
/// position, under IDs of every kind, and each query answers as a scan does.
@Suite("Query results: record IDs read from index entries")
struct QueryWindowIDTests {
    /// A value of a random kind; small and large integers of both signs,
    /// strings around the 30 bytes an entry keeps inline.
    static func value(_ random: inout SeededRandom) -> Value {
        switch random.int(below: 12) {
        case 0: return .null
        case 1: return .bool(random.int(below: 2) == 0)
        case 2: return .int(Int64(random.int(below: 5)) - 2)
        case 3: return .int(Int64(bitPattern: random.next()))
        case 4: return .int(-Int64(random.int(below: 1 << 20)))
        case 5: return .double(Double(random.int(below: 1_000)) / 7 - 50)
        case 6: return .date(Date(timeIntervalSinceReferenceDate: Double(random.int(below: 1_000_000)) - 500_000))
        case 7: return .string(String(repeating: "é", count: random.int(below: 3)))
        case 8: return .string(String(repeating: "x", count: random.int(below: 40)))
        case 9: return .reference(RecordReference(table: "t", id: RecordID(random.int(below: 4))))
        case 10: return .list([.int(Int64(random.int(below: 3)))])
        default: return .missingField
        }
    }

    static func id(_ n: Int, _ random: inout SeededRandom) -> RecordID {
        switch random.int(below: 6) {
        case 0: return RecordID(Int64(n) - 1_000)
        case 1: return RecordID(Int64(n) &* 0x0100_0000_0001)
        case 2: return RecordID(Int64.min + Int64(n))
        case 3: return RecordID("id \(n)")
        case 4: return RecordID(String(repeating: "ü", count: 20) + "\(n)")
        default: return RecordID(UUID())
        }
    }

    @Test("ids, records, first, last and count of an index agree with a scan, for values and IDs of every kind")
    func everyKind() throws {
        for seed: UInt64 in [1, 2, 3, 4, 5] {
            var random = SeededRandom(seed: seed)
            var builder = TransactionBuilder(on: Database())
            let fields: [FieldPath] = ["a", "b", "c"]
            try builder.createIndex("abc", on: "rows", fields: fields)
            for n in 0..<400 {
                var record: Record = [:]
                for field: Key in ["a", "b", "c"] {
                    let value = Self.value(&random)
                    if value != .missingField { record[field] = value }
                }
                // Few distinct leading values, so that equalities select many.
                if random.int(below: 3) > 0 { record["a"] = .int(Int64(random.int(below: 3))) }
                try builder.upsert(record, id: Self.id(n, &random), into: "rows")
            }
            let database = builder.database
            let rows = database[table: "rows"].records.map { (id: $0.key, record: $0.value) }
            for probe in 0..<60 {
                let context = "seed \(seed), probe \(probe)"
                let pick = rows[random.int(below: rows.count)].record
                let equalCount = random.int(below: 4)
                var query = database.query("rows")
                var expected = rows
                for field in fields.prefix(equalCount) {
                    let value = pick[path: field] ?? .null
                    query = query.where(field, equals: value)
                    expected = expected.filter { ($0.record[path: field] ?? .null) == value }
                }
                // The index's order: its values, then the ID.
                expected.sort { x, y in
                    for field in fields {
                        let (a, b) = (x.record[path: field] ?? .null, y.record[path: field] ?? .null)
                        if a != b { return a < b }
                    }
                    return x.id < y.id
                }
                let descending = random.int(below: 2) == 0
                if equalCount == 0 || (equalCount < fields.count && random.int(below: 2) == 0) {
                    query = query.order(by: fields[min(equalCount, fields.count - 1)], descending: descending)
                    if descending { expected.reverse() }
                }
                if random.int(below: 3) == 0 {
                    let limit = random.int(below: 20)
                    let offset = random.int(below: 5)
                    query = query.limit(limit, offset: offset)
                    expected = Array(expected.dropFirst(offset).prefix(limit))
                }
                #expect(try query.explain().access == .index("abc"), "\(context)")
                #expect(try query.ids() == expected.map(\.id), "\(context)")
                #expect(try query.records().map(\.id) == expected.map(\.id), "\(context)")
                #expect(try query.records().map(\.record) == expected.map(\.record), "\(context)")
                #expect(try query.first()?.id == expected.first?.id, "\(context)")
                #expect(try query.last()?.id == expected.last?.id, "\(context)")
                #expect(try query.count() == expected.count, "\(context)")
            }
        }
    }
}

extension Value {
    /// A marker for "leave the field out" in the generator above.
    fileprivate static let missingField = Value.string("\u{0}missing")
}
