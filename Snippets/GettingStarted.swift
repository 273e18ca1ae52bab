// A store, a transaction, a read of the current value.
import Foundation
import Strata

// snippet.hide
let directory = FileManager.default.temporaryDirectory.path + "/strata-snippet-\(UUID().uuidString)"
defer { try? FileManager.default.removeItem(atPath: directory) }
// snippet.show
var options = StoreOptions()
options.createIfMissing = true
let store = try await Store.open(at: directory + "/library.strata", options: options)

try await store.transact(message: "Add a song") { builder in
    try builder.insert(["title": "Blue River", "plays": 0], id: 7, into: "songs")
}
let library = store.current
print(library.record(7, in: "songs")?["title"] ?? "none")  // "Blue River"
try await store.close()
