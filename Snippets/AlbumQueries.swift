// Declared indexes, queries on the current value and on a past one.
import Foundation
import Strata

// snippet.hide
let directory = FileManager.default.temporaryDirectory.path + "/strata-snippet-\(UUID().uuidString)"
defer { try? FileManager.default.removeItem(atPath: directory) }
var options = StoreOptions()
options.createIfMissing = true
let store = try await Store.open(at: directory + "/library.strata", options: options)
// snippet.show
try await store.transact(message: "Indexes") { builder in
    try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
    try builder.createIndex("byAdded", on: "songs", fields: ["added"])
}
let imported = try await store.transact(message: "Import") { builder in
    for n in 1...40 {
        let record: Record = [
            "title": .string("Song \(n)"), "album": .string(n <= 12 ? "Blue River" : "Other"),
            "track": .int(Int64(n)), "added": .int(Int64(n)),
        ]
        try builder.insert(record, id: RecordID(Int64(n)), into: "songs")
    }
}

let library = store.current
let album = try library.query("songs").where("album", equals: "Blue River").order(by: "track").records()
let recent = try library.query("songs").order(by: "added", descending: true).limit(10).ids()
let page = try library.query("songs").order(by: "added").limit(25, offset: 25).ids()
print(album.count, recent.first!, page.count)  // 12 40 15
print(try library.query("songs").where("album", equals: "Blue River").explain())  // "index byAlbum"

// The same query on a past value runs through that value's own indexes.
let past = try await store.database(asOf: imported.transaction.t - 1)
print(try past.query("songs").where("album", equals: "Blue River").count())  // 0
// snippet.hide
try await store.close()
