// Observing a query: a result now, then one per commit that changed it.
import Foundation
import Strata

// snippet.hide
let directory = FileManager.default.temporaryDirectory.path + "/strata-snippet-\(UUID().uuidString)"
defer { try? FileManager.default.removeItem(atPath: directory) }
var options = StoreOptions()
options.createIfMissing = true
let store = try await Store.open(at: directory + "/library.strata", options: options)
try await store.transact { try $0.createIndex("byAlbum", on: "songs", fields: ["album", "track"]) }
// snippet.show
let album = await store.observe { database in
    try database.query("songs").where("album", equals: "Blue River").order(by: "track").ids()
}
let screen = Task {
    for try await ids in album {
        print("show", ids)  // [], then [1], then [1, 2]
    }
}
try await store.transact { try $0.insert(["album": "Blue River", "track": 1], id: 1, into: "songs") }
try await store.transact { try $0.insert(["album": "Other", "track": 1], id: 9, into: "songs") }  // not run
try await store.transact { try $0.insert(["album": "Blue River", "track": 2], id: 2, into: "songs") }
try await store.close()  // ends every observation
try await screen.value
