// Undo and redo of user actions, an import grouped into one.
import Foundation
import Strata

// snippet.hide
let directory = FileManager.default.temporaryDirectory.path + "/strata-snippet-\(UUID().uuidString)"
defer { try? FileManager.default.removeItem(atPath: directory) }
var options = StoreOptions()
options.createIfMissing = true
let store = try await Store.open(at: directory + "/library.strata", options: options)
// snippet.show
// An import in chunks: one undoable action.
for chunk in 0..<5 {
    try await store.transact(message: "Import", significance: .significant, metadata: [Store.undoGroupKey: "import 1"])
    {
        builder in
        for n in 0..<104 { try builder.insert(["title": "Song"], id: RecordID(Int64(chunk * 104 + n)), into: "songs") }
    }
}
print(try await store.undoAction()?.name ?? "nothing")  // "Import": the Edit menu's title

try await store.undo()  // all 520 songs go, as one recorded transaction
try await store.redo()  // and come back

// A later edit of what the import wrote: undoing it would overwrite that edit.
try await store.transact(message: "Played", significance: .minor) { builder in
    try builder.update(3, in: "songs", [.set("plays", 1)])
}
do {
    try await store.undo()
} catch let error as UndoError {
    print(error)  // cannot undo or redo “Import”: later edits changed songs 3 (plays)
}
// snippet.hide
try await store.close()
