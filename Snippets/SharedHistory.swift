// Two peers writing one history: a stale commit is rebased, a conflicting one refused.
import Strata

let storage = MemoryHistoryStorage()  // a database server's storage in production
let laptop = try await Peer.open(storage)
let server = try await Peer.open(storage)
print(server.current.basis)  // 0

try await laptop.transact(message: "Add") { builder in
    try builder.insert(["title": "Blue River", "plays": 0], id: 1, into: "songs")
}
try await server.catchUp()
try await laptop.transact { try $0.update(1, in: "songs", [.set("plays", 1)]) }

// Built on t 1, stored at t 3: the title was not touched since.
let report = try await server.transact { try $0.update(1, in: "songs", [.set("title", "Blue River (live)")]) }
print(report.transaction.t)  // 3

// `await server.startFollowing()` would apply the laptop's commits as they come.
try await laptop.catchUp()
print(laptop.current == server.current)  // true
