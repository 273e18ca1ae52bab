import HashTreeCollections
import PersistentCollections

/// The operations the `map` scenario times, over the three maps compared in
/// one run. Each adapter is a thin wrapper, specialized away in release.
protocol MapSubject {
    associatedtype Key: Hashable
    static var name: String { get }
    init()
    init(bulk entries: [(Key, Int)])
    var count: Int { get }
    func lookup(_ key: Key) -> Int?
    mutating func set(_ key: Key, _ value: Int)
    mutating func remove(_ key: Key)
    func sumValues() -> Int
    static func equal(_ a: Self, _ b: Self) -> Bool
}

struct PersistentMapSubject<Key: Hashable>: MapSubject {
    static var name: String { "PersistentMap" }
    var map: PersistentMap<Key, Int>
    init() { map = PersistentMap() }
    init(map: PersistentMap<Key, Int>) { self.map = map }
    init(bulk entries: [(Key, Int)]) { map = PersistentMap(uniqueKeysWithValues: entries) }
    var count: Int { map.count }
    func lookup(_ key: Key) -> Int? { map[key] }
    mutating func set(_ key: Key, _ value: Int) { map[key] = value }
    mutating func remove(_ key: Key) { map.removeValue(forKey: key) }
    func sumValues() -> Int {
        var sum = 0
        for (_, value) in map { sum &+= value }
        return sum
    }
    static func equal(_ a: Self, _ b: Self) -> Bool { a.map == b.map }
}

struct TreeDictionarySubject<Key: Hashable>: MapSubject {
    static var name: String { "TreeDictionary" }
    var map: TreeDictionary<Key, Int>
    init() { map = TreeDictionary() }
    init(bulk entries: [(Key, Int)]) { map = TreeDictionary(uniqueKeysWithValues: entries) }
    var count: Int { map.count }
    func lookup(_ key: Key) -> Int? { map[key] }
    mutating func set(_ key: Key, _ value: Int) { map[key] = value }
    mutating func remove(_ key: Key) { map.removeValue(forKey: key) }
    func sumValues() -> Int {
        var sum = 0
        for (_, value) in map { sum &+= value }
        return sum
    }
    static func equal(_ a: Self, _ b: Self) -> Bool { a.map == b.map }
}

struct DictionarySubject<Key: Hashable>: MapSubject {
    static var name: String { "Dictionary" }
    var map: [Key: Int]
    init() { map = [:] }
    init(bulk entries: [(Key, Int)]) { map = Dictionary(uniqueKeysWithValues: entries) }
    var count: Int { map.count }
    func lookup(_ key: Key) -> Int? { map[key] }
    mutating func set(_ key: Key, _ value: Int) { map[key] = value }
    mutating func remove(_ key: Key) { map.removeValue(forKey: key) }
    func sumValues() -> Int {
        var sum = 0
        for (_, value) in map { sum &+= value }
        return sum
    }
    static func equal(_ a: Self, _ b: Self) -> Bool { a.map == b.map }
}
