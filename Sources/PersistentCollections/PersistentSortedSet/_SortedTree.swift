/// The descents of a ``PersistentSortedSet``'s tree: from a root (or
/// any node the caller's tree keeps alive) down to a leaf, through
/// unretained references (see `_SortedInner.unretainedChild`), so that a
/// lookup does no reference counting. Always inlined, for the reason given
/// above the descents in PersistentSortedSet.swift.
@usableFromInline
enum _SortedTree<Element: Comparable> {
    @usableFromInline typealias Set = PersistentSortedSet<Element>
    @usableFromInline typealias _Leaf = _SortedLeaf<Element>
    @usableFromInline typealias _Inner = _SortedInner<Element>

    /// The leaf where a descent from `root`, `height` levels above the
    /// leaves, choosing children by `child`, ends; `body`'s answer there.
    @inlinable @inline(__always)
    static func descend<R>(
        from root: AnyObject,
        height: Int,
        _ child: (_Inner) -> Int,
        _ body: (_Leaf) -> R
    ) -> R {
        descend(from: Unmanaged.passUnretained(root), height: height, child, body)
    }

    /// The number of elements below the probe under `root`.
    @inlinable @inline(__always)
    static func rank(
        from root: AnyObject,
        height: Int,
        isBelow: (Element) -> Bool,
        isAbove: (Element) -> Bool
    ) -> Int {
        rank(from: Unmanaged.passUnretained(root), height: height, isBelow: isBelow, isAbove: isAbove)
    }

    /// The same descent from `node`, `height` levels above the leaves (a
    /// node the caller's tree keeps alive).
    @inlinable @inline(__always)
    static func descend<R>(
        from node: Unmanaged<AnyObject>,
        height: Int,
        _ child: (_Inner) -> Int,
        _ body: (_Leaf) -> R
    ) -> R {
        var node = node
        for _ in 0..<height {
            node = node._withUnsafeGuaranteedRef { object in
                let inner = Set._inner(object)
                return inner.unretainedChild(child(inner))
            }
        }
        return node._withUnsafeGuaranteedRef { body(Set._leaf($0)) }
    }

    /// The number of elements below the probe under `node`.
    @inlinable @inline(__always)
    static func rank(
        from node: Unmanaged<AnyObject>,
        height: Int,
        isBelow: (Element) -> Bool,
        isAbove: (Element) -> Bool
    ) -> Int {
        var rank = 0
        let inLeaf = descend(
            from: node,
            height: height,
            { inner in
                let child = inner.childIndex(probeIsBelow: isAbove)
                rank += inner.count(in: 0..<child)
                return child
            }
        ) { $0.lowerBound(isBelow) }
        return rank + inLeaf
    }

    /// The ranks of two probes under `root`, the lower first (see
    /// `PersistentSortedSet._ranks`): one descent while both lie under the
    /// same child, two taken in step below the node where they part; nil
    /// when the upper probe is below the lower one.
    @inlinable @inline(__always)
    static func ranks(
        from root: AnyObject,
        height: Int,
        lowerIsBelow: (Element) -> Bool,
        lowerIsAbove: (Element) -> Bool,
        upperIsBelow: (Element) -> Bool,
        upperIsAbove: (Element) -> Bool
    ) -> Range<Int>? {
        var node = Unmanaged<AnyObject>.passUnretained(root)
        var height = height
        // Elements in the children left of the shared path.
        var before = 0
        while height > 0 {
            var next = node
            // Inside the guaranteed reference: no retain of the node.
            let parted: Range<Int>?? = node._withUnsafeGuaranteedRef { object in
                let inner = Set._inner(object)
                let lowerChild = inner.childIndex(probeIsBelow: lowerIsAbove)
                let upperChild = inner.childIndex(probeIsBelow: upperIsAbove, touching: false)
                let low = before + inner.count(in: 0..<Swift.min(lowerChild, upperChild))
                let between = inner.count(in: lowerChild..<Swift.max(lowerChild, upperChild))
                guard lowerChild == upperChild else {
                    guard lowerChild < upperChild else { return .some(nil) }
                    let (lower, upper) = ranks(
                        under: inner.unretainedChild(lowerChild),
                        inner.unretainedChild(upperChild),
                        height: height - 1,
                        lowerIsBelow: lowerIsBelow,
                        lowerIsAbove: lowerIsAbove,
                        upperIsBelow: upperIsBelow,
                        upperIsAbove: upperIsAbove
                    )
                    return (low + lower)..<(low + between + upper)
                }
                before = low
                next = inner.unretainedChild(lowerChild)
                return nil
            }
            if let parted { return parted }
            node = next
            height -= 1
        }
        return node._withUnsafeGuaranteedRef { object in
            let leaf = Set._leaf(object)
            let lower = leaf.lowerBound(lowerIsBelow)
            let upper = leaf.lowerBound(upperIsBelow)
            return lower <= upper ? (before + lower)..<(before + upper) : nil
        }
    }

    // A range's two bounds part at some node, and below it each bound needs
    // a descent of its own. Run one after the other, every level of both
    // waits for its memory reads in turn: on a tree larger than the caches,
    // most of a narrow range's count. Run in step, the reads of one descent
    // are issued while the other's are still on their way, and the two cost
    // about one.

    /// The ranks of two probes under two nodes `height` levels above the
    /// leaves (nodes the caller's tree keeps alive), the descents taken in
    /// step: the number of elements below the lower probe under
    /// `lowerNode`, and below the upper probe under `upperNode`.
    @inlinable @inline(__always)
    static func ranks(
        under lowerNode: Unmanaged<AnyObject>,
        _ upperNode: Unmanaged<AnyObject>,
        height: Int,
        lowerIsBelow: (Element) -> Bool,
        lowerIsAbove: (Element) -> Bool,
        upperIsBelow: (Element) -> Bool,
        upperIsAbove: (Element) -> Bool
    ) -> (lower: Int, upper: Int) {
        var nodes = (lowerNode, upperNode)
        var ranks = (0, 0)
        for _ in 0..<height {
            // Inside the guaranteed references: no retain of either node.
            nodes = nodes.0._withUnsafeGuaranteedRef { l in
                nodes.1._withUnsafeGuaranteedRef { u in
                    let (a, b) = (Set._inner(l), Set._inner(u))
                    _touchLines(a.separatorLines, b.separatorLines)
                    // A child's index: the separators the probe is not below.
                    let (i, j) = _partitionPoints(
                        a._header.pointee.separatorElements,
                        count: a.width - 1,
                        lowerIsAbove,
                        b._header.pointee.separatorElements,
                        count: b.width - 1,
                        upperIsAbove,
                        is: false
                    )
                    ranks.0 += a.count(in: 0..<i)
                    ranks.1 += b.count(in: 0..<j)
                    return (a.unretainedChild(i), b.unretainedChild(j))
                }
            }
        }
        let inLeaves = nodes.0._withUnsafeGuaranteedRef { l in
            nodes.1._withUnsafeGuaranteedRef { u in
                Set._leaf(l).withElements { a in
                    Set._leaf(u).withElements { b in
                        _touchLines(_lines(a.baseAddress, count: a.count), _lines(b.baseAddress, count: b.count))
                        return _partitionPoints(
                            a.baseAddress,
                            count: a.count,
                            lowerIsBelow,
                            b.baseAddress,
                            count: b.count,
                            upperIsBelow,
                            is: true
                        )
                    }
                }
            }
        }
        return (ranks.0 + inLeaves.0, ranks.1 + inLeaves.1)
    }
}
