import Strata
import Testing

/// The README's index and query examples, run as written.
@Suite("README: indexes and queries")
struct ReadmeIndexExampleTests {
    @Test("every line of the README's example gives what its comment says")
    func example() throws {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
        try builder.createIndex("byAdded", on: "songs", fields: ["added"])
        try builder.createIndex("byPath", on: "songs", fields: ["path"], unique: true)
        try builder.insert(["album": "Blue", "track": 2, "added": 20, "path": "/b.m4a"], id: 1, into: "songs")
        try builder.insert(["album": "Blue", "track": 1, "added": 10, "path": "/a.m4a"], id: 2, into: "songs")
        let library = try apply(Database(), builder.transaction(t: 1))

        let album = try library.query("songs").where("album", equals: "Blue").order(by: "track").records()
        #expect(album.map(\.id) == [2, 1])
        let recent = try library.query("songs").order(by: "added", descending: true).limit(50).ids()
        #expect(recent == [1, 2])
        let count = try library.query("songs").where("album", equals: "Blue").where("track", in: 2...).count()
        #expect(count == 1)
        let page = try library.query("songs").order(by: "added").limit(25, offset: 0).ids()
        #expect(page == [2, 1])
        #expect(try library.query("songs").where("album", equals: "Blue").explain().description == "index byAlbum")
        #expect(try library.query("songs").filter { $0["track"] == 1 }.explain().description == "scan + filter + sort")
    }
}
