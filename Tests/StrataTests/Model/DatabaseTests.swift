import PersistentCollections
import Strata
import Testing

@Suite("Database reading")
struct DatabaseTests {
    @Test("tables, records, values and counts")
    func reading() {
        let songs = Table(
            records: [
                1: ["title": "Blue River", "plays": 12, "album": .reference(RecordReference(table: "albums", id: 9))],
                2: ["title": "Echo", "meta": ["mood": "calm"]],
            ]
        )
        let albums = Table(records: [9: ["name": "Night"]])
        let database = Database(tables: ["songs": songs, "albums": albums, "empty": Table()], basis: 5)
        #expect(database.basis == 5)
        #expect(database.tableNames == ["albums", "songs"], "empty tables are dropped")
        #expect(database.recordCount == 3)
        #expect(database[table: "songs"].count == 2)
        #expect(database[table: "missing"].isEmpty)
        #expect(database.record(1, in: "songs")?["plays"] == 12)
        #expect(database.record(3, in: "songs") == nil)
        #expect(database.value(at: "meta.mood", of: 2, in: "songs") == "calm")
        let reference = database.record(1, in: "songs")?["album"]?.referenceValue
        #expect(reference.flatMap { database.record($0.id, in: $0.table) }?["name"] == "Night")
        #expect(Set(database[table: "songs"].ids) == [1, 2])
        #expect(Database() == Database(tables: [:], basis: 0))
    }
}
