import PersistentCollections
import Strata
import Testing

@Suite("apply errors")
struct ApplyErrorTests {
    static let base = Database(
        tables: ["songs": Table(records: [1: ["title": "Blue River", "plays": 3]])],
        basis: 1
    )

    static func transaction(_ changes: PersistentMap<RecordID, Change>) -> Transaction {
        Transaction(t: 2, basis: 1, changes: ["songs": changes])
    }

    @Test("each refused change names table, record and field, and leaves the value unchanged")
    func refusals() {
        let cases: [(Change, RecordID, ApplyError)] = [
            (.insert(["title": "Echo"]), 1, .recordExists(table: "songs", id: 1)),
            (.delete(["title": "Echo"]), 2, .recordMissing(table: "songs", id: 2, change: "delete")),
            (
                .update(["plays": FieldChange(old: 3, new: 4)]), 2,
                .recordMissing(table: "songs", id: 2, change: "update")
            ),
            (.delete(["title": "Blue River"]), 1, .recordChanged(table: "songs", id: 1)),
            (
                .update(["plays": FieldChange(old: 9, new: 10)]), 1,
                .conflict(table: "songs", id: 1, field: "plays", expected: 9, found: 3)
            ),
        ]
        for (change, id, expected) in cases {
            let database = Self.base
            #expect(throws: expected) { try apply(database, Self.transaction([id: change])) }
            #expect(database == Self.base)
        }
        #expect(
            ApplyError.conflict(table: "songs", id: 1, field: "plays", expected: 9, found: 3).description
                == "conflict at songs/1.plays: expected 9, found 3"
        )
        #expect(
            ApplyError.recordExists(table: "songs", id: 1).description == "cannot insert songs/1: the record exists"
        )
    }

    @Test("a transaction that applies sets the basis to its t")
    func basis() throws {
        let result = try apply(Self.base, Self.transaction([2: .insert(["title": "Echo"])]))
        #expect(result.basis == 2 && result.record(2, in: "songs")?["title"] == "Echo")
        #expect(result.record(1, in: "songs") == Self.base.record(1, in: "songs"))
    }

    @Test("a refused builder edit leaves the builder as it was")
    func builderUnchanged() throws {
        var builder = TransactionBuilder(on: Self.base)
        try builder.update(1, in: "songs", [.set("plays", 4)])
        let before = (builder.changes, builder.database)
        #expect(throws: ApplyError.recordExists(table: "songs", id: 1)) {
            try builder.insert(["title": "Echo"], id: 1, into: "songs")
        }
        #expect(throws: FieldPathError.self) { try builder.update(1, in: "songs", [.set("title.x", 1)]) }
        #expect(throws: ApplyError.recordMissing(table: "songs", id: 5, change: "delete")) {
            try builder.delete(5, from: "songs")
        }
        #expect(builder.changes == before.0 && builder.database == before.1)
        try builder.update(1, in: "songs", [.set("plays", 3)])
        #expect(builder.changes.isEmpty, "an edit back to the original cancels out")
    }
}
