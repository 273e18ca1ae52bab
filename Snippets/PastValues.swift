// Past values: as-of reads, a diff between two values, a revert.
import Foundation
import Strata

// snippet.hide
let directory = FileManager.default.temporaryDirectory.path + "/strata-snippet-\(UUID().uuidString)"
defer { try? FileManager.default.removeItem(atPath: directory) }
var options = StoreOptions()
options.createIfMissing = true
let store = try await Store.open(at: directory + "/library.strata", options: options)
// snippet.show
let added = try await store.transact(message: "Add two songs") { builder in
    try builder.insert(["title": "Blue River"], id: 1, into: "songs")
    try builder.insert(["title": "Red Sky"], id: 2, into: "songs")
}
try await store.transact(message: "Retitle") { builder in
    try builder.update(1, in: "songs", [.set("title", "Blue River (live)")])
}

// Any past value, rebuilt from checkpoints, snapshots and the log.
let before = try await store.database(asOf: added.transaction.t)
print(before.record(1, in: "songs")?["title"] ?? "none")  // "Blue River"

// What changed between two values, and the history that did it.
let changes = diff(from: before, to: store.current)
print(changes.tables["songs"]?.changed ?? [:])  // [1: ["title"]]
for transaction in try await store.history() { print(transaction.t, transaction.message) }

// Going back is a new transaction: nothing is lost.
try await store.revert(to: added.transaction.t, message: "Back to the import")
print(store.current.record(1, in: "songs")?["title"] ?? "none")  // "Blue River"
// snippet.hide
try await store.close()
