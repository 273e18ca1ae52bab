import Foundation
import PersistentCollections
import Testing

/// A value holding a sorted map of values like itself, as a JSON-like
/// document or a tree of folders would.
private struct Folder {
    var children: PersistentSortedMap<Int, Folder>
    var mark: Tracked?
}

/// An element of a sorted set that holds a sorted set of its own.
private struct Node: Comparable {
    var id: Int
    var inner: PersistentSortedSet<Node>

    static func < (a: Node, b: Node) -> Bool { a.id < b.id }
    static func == (a: Node, b: Node) -> Bool { a.id == b.id }
}

/// Sorted maps and sets nested far deeper than the stack allows
/// recursion free their elements through the nodes' nested release, as
/// `PersistentMap` and `PersistentVector` do (a cold hunt crashed a
/// 20,000-deep one). Branch nodes keep copies of elements as separators,
/// often the last ones: those are freed the same way.
@Suite("Sorted maps and sets nested without bound")
struct PersistentSortedNestedReleaseTests {
    @Test("a sorted map and a sorted set nested 200,000 deep, one entry a level, are freed")
    func oneEntryALevel() {
        let life = LiveCount()
        do {
            var folder = Folder(children: [:], mark: Tracked(life))
            for level in 0..<200_000 { folder = Folder(children: [level: folder], mark: nil) }
            #expect(folder.children.count == 1)
            var node = Node(id: 0, inner: [])
            for level in 1...200_000 { node = Node(id: level, inner: [node]) }
            #expect(node.inner.count == 1)
        }
        #expect(life.live == 0)
    }

    /// `depth` levels of 64 entries each (a branch over three leaves),
    /// every entry holding the level below: the last reference to it is
    /// a separator, released after the branch's children.
    private static func wide(_ depth: Int, life: LiveCount) -> Folder {
        var folder = Folder(children: [:], mark: Tracked(life))
        for _ in 0..<depth {
            folder = Folder(
                children: PersistentSortedMap(sortedUniqueKeysWithValues: (0..<64).map { ($0, folder) }),
                mark: nil
            )
        }
        return folder
    }

    @Test("sorted maps nested 30,000 deep through their branches' separators are freed, also on a small thread stack")
    func throughSeparators() async {
        let life = LiveCount()
        do {
            let folder = Self.wide(30_000, life: life)
            #expect(folder.children.count == 64)
        }
        #expect(life.live == 0)
        // A thread of 512 KiB: at most 64 nested destructions stand on it.
        let left = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
            let thread = Thread {
                let small = LiveCount()
                var folder: Folder? = Self.wide(20_000, life: small)
                let built = folder?.children.count
                folder = nil
                done.resume(returning: built == 64 ? small.live : -1)
            }
            thread.stackSize = 512 << 10
            thread.start()
        }
        #expect(left == 0)
    }

    @Test("a nested value shared with another is not freed with it")
    func sharedStaysWhole() {
        let life = LiveCount()
        let inner = Self.wide(2_000, life: life)
        var outer: Folder? = Folder(children: [1: inner, 2: inner], mark: nil)
        outer = nil
        #expect(outer == nil && life.live == 1)
        var depth = 0
        var walk = inner
        while let next = walk.children.first?.value {
            depth += 1
            walk = next
        }
        #expect(depth == 2_000 && walk.mark != nil)
    }
}
