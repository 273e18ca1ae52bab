import PersistentCollections
import Strata
import Testing

/// A table's changes from 1,024 on apply on every core: the same value, the
/// same indexes and the same error as the changes applied a few at a time.
@Suite("large transactions")
struct LargeTransactionTests {
    static let size = 3_000

    static func base() throws -> Database {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byGroup", on: "songs", fields: ["group"])
        try builder.createIndex("byNumber", on: "songs", fields: ["number"], unique: true)
        for i in 0..<size {
            try builder.insert(["number": .int(Int64(i)), "group": .int(Int64(i % 7))], id: RecordID(i), into: "songs")
        }
        try builder.insert(["name": "other table"], id: 1, into: "albums")
        return try apply(Database(), builder.transaction(message: "base"))
    }

    /// Inserts, deletes and updates of `songs`, `count` in all.
    static func changes(of base: Database, count: Int, random: inout SeededRandom) -> PersistentMap<RecordID, Change> {
        var changes = PersistentMap<RecordID, Change>()
        var next = size
        while changes.count < count {
            let id = random.int(below: size)
            let record = base.record(RecordID(id), in: "songs")!
            switch random.int(below: 3) {
            case 0:
                changes[RecordID(next)] = .insert(["number": .int(Int64(next)), "group": .int(Int64(next % 5))])
                next += 1
            case 1:
                changes[RecordID(id)] = .delete(record)
            default:
                changes[RecordID(id)] = .update([
                    "number": FieldChange(old: record["number"], new: .int(Int64(id + 1_000_000))),
                    "group": FieldChange(old: record["group"], new: .int(Int64(id % 3))),
                    "note": FieldChange(old: nil, new: "edited"),
                ])
            }
        }
        return changes
    }

    static func transaction(_ changes: PersistentMap<RecordID, Change>, basis: Int64) -> Transaction {
        Transaction(t: basis + 1, basis: basis, message: "batch", changes: ["songs": changes])
    }

    @Test("the value and indexes of the changes applied 100 at a time", arguments: [1_024, 2_500])
    func sameValue(count: Int) throws {
        for seed in UInt64(1)...3 {
            var random = SeededRandom(seed: seed)
            let base = try Self.base()
            let changes = Self.changes(of: base, count: count, random: &random)
            let whole = try apply(base, Self.transaction(changes, basis: base.basis))

            var expected = base
            var chunk = PersistentMap<RecordID, Change>()
            for (id, change) in changes {
                chunk[id] = change
                if chunk.count == 100 {
                    expected = try apply(expected, Self.transaction(chunk, basis: base.basis))
                    chunk = [:]
                }
            }
            expected = try apply(expected, Self.transaction(chunk, basis: base.basis))

            #expect(whole == expected, "seed \(seed)")
            for (_, table) in whole.tables { table._invariantCheck() }
            let songs = try #require(whole.tables["songs"])
            #expect(songs.index(named: "byGroup") == expected.tables["songs"]?.index(named: "byGroup"), "seed \(seed)")
            #expect(
                songs.index(named: "byNumber") == expected.tables["songs"]?.index(named: "byNumber"),
                "seed \(seed)"
            )
            #expect(
                try whole.query("songs").where("group", equals: 2).count()
                    == expected.query("songs").where("group", equals: 2).count()
            )
            // The value applied to is unchanged.
            #expect(base == (try Self.base()), "seed \(seed)")
        }
    }

    @Test("the error of the first change, in the changes' order, that does not apply")
    func firstError() throws {
        for seed in UInt64(1)...6 {
            var random = SeededRandom(seed: seed)
            let base = try Self.base()
            var changes = Self.changes(of: base, count: 2_000, random: &random)
            // A few changes that cannot apply: an insert of a record that
            // exists, an update expecting another value, a delete of a
            // record that is absent.
            for _ in 0..<(1 + random.int(below: 3)) {
                let id = RecordID(random.int(below: Self.size))
                switch random.int(below: 3) {
                case 0: changes[id] = .insert(["number": -1])
                case 1: changes[id] = .update(["number": FieldChange(old: -5, new: 1)])
                default: changes[RecordID(Self.size + 50_000 + random.int(below: 100))] = .delete(["number": 1])
                }
            }
            var expected: ApplyError?
            for (id, change) in changes where expected == nil {
                do {
                    _ = try apply(base, Self.transaction([id: change], basis: base.basis))
                } catch let error as ApplyError {
                    expected = error
                }
            }
            let error = try #require(expected)
            #expect(throws: error, "seed \(seed)") { try apply(base, Self.transaction(changes, basis: base.basis)) }
        }
    }

    @Test("a unique index refuses a large transaction that repeats a key")
    func uniqueViolation() throws {
        let base = try Self.base()
        var changes = PersistentMap<RecordID, Change>()
        for i in 0..<1_500 {
            changes[RecordID(Self.size + i)] = .insert(["number": .int(Int64(Self.size + i)), "group": 1])
        }
        changes[RecordID(Self.size + 2_000)] = .insert(["number": 17, "group": 1])
        #expect(throws: ApplyError.self) { try apply(base, Self.transaction(changes, basis: base.basis)) }
        changes[RecordID(Self.size + 2_000)] = .insert(["number": 1_000_000, "group": 1])
        let applied = try apply(base, Self.transaction(changes, basis: base.basis))
        #expect(applied.tables["songs"]?.count == Self.size + 1_501)
        #expect(try applied.query("songs").where("number", equals: 1_000_000).ids() == [RecordID(Self.size + 2_000)])
    }
}
