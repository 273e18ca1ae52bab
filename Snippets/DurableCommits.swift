// Durability policies, snapshots, and what opening recovered from.
import Foundation
import Strata

// snippet.hide
let directory = FileManager.default.temporaryDirectory.path + "/strata-snippet-\(UUID().uuidString)"
defer { try? FileManager.default.removeItem(atPath: directory) }
// snippet.show
var options = StoreOptions()
options.createIfMissing = true
options.durability = .grouped  // concurrent commits share one fsync
options.snapshotEveryTransactions = 10_000
options.recovery = .strict  // a damaged log throws; .truncateAtDamage keeps what precedes it

let store = try await Store.open(at: directory + "/library.strata", options: options)
for warning in store.warnings { print("recovered:", warning) }

do {
    try await store.transact(message: "Import") { builder in
        try builder.insert(["title": "Blue River"], id: 1, into: "songs")
    }
} catch let error as StoreError {
    // Nothing was committed, and `current` is unchanged.
    print("not committed:", error)
}
_ = try await store.snapshot()  // also taken in the background by the policy
try await store.close()  // syncs the log and releases the store's lock
