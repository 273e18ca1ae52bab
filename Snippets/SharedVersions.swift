// Versions of a map and a vector that share their untouched nodes.
import PersistentCollections

var versions: [PersistentMap<String, Int>] = [["a": 1, "b": 2]]
for n in 0..<3 {
    var next = versions.last!
    next["a"] = n  // copies one path; every other node is shared
    versions.append(next)
}
print(versions.map { $0["a"]! })  // [1, 0, 1, 2]

var playlist: PersistentVector<String> = ["Blue River", "Red Sky"]
let before = playlist
playlist.append("Gold")
print(before.count, playlist.count)  // 2 3

var byTitle = PersistentSortedMap<String, Int>()
for (n, title) in ["b", "c", "a"].enumerated() { byTitle[title] = n }
print(Array(byTitle.keys))  // ["a", "b", "c"]
