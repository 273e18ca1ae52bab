// Codable records, and a model that evolved.
import Foundation
import Strata

// snippet.hide
let directory = FileManager.default.temporaryDirectory.path + "/strata-snippet-\(UUID().uuidString)"
defer { try? FileManager.default.removeItem(atPath: directory) }
var options = StoreOptions()
options.createIfMissing = true
let store = try await Store.open(at: directory + "/library.strata", options: options)
try await store.transact { builder in
    // Written by version 1 of the app: "name", and plays as text.
    try builder.insert(["name": "Blue River", "plays": "12"], id: 7, into: "songs")
}
// snippet.show
struct Song: StoredRecord, Equatable {
    static let table: Key = "songs"
    var id: Int
    var title: String  // was "name"
    var plays: Int  // was text
    var rating: Int  // new, defaulted
    var album: String?  // new, optional: nil is an absent field

    static var schema: RecordSchema {
        RecordSchema(
            renamedFields: ["name": "title"],
            defaults: ["rating": 0],
            upcasters: [
                "plays": { value in
                    if case .string(let text) = value { return .int(Int64(text) ?? 0) }
                    return value
                }
            ]
        )
    }
}

var song = try store.current.record(Song.self, id: 7)!  // an old record reads into the new model
song.plays += 1
let played = song
try await store.transact(message: "Played") { builder in
    try builder.save(played)  // stores only the fields that changed
}
let all = try store.current.records(Song.self)
print(all.map(\.title))  // ["Blue River"]
// snippet.hide
try await store.close()
