// A range's two bounds part at some node, and below it each bound needs a
// descent of its own. Run one after the other, every level of both waits
// for its memory reads in turn: on a tree larger than the caches, most of
// a narrow range's count. Run in step, the reads of one descent are issued
// while the other's are still on their way, and the two cost about one.

extension PersistentSortedSet {
    /// The ranks of two probes under two nodes `height` levels above the
    /// leaves (nodes the caller's tree keeps alive), the descents taken in
    /// step: the number of elements below the lower probe under
    /// `lowerNode`, and below the upper probe under `upperNode`.
    @inlinable @inline(__always)
    static func _ranks(
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
                    let (a, b) = (_inner(l), _inner(u))
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
                _leaf(l).withElements { a in
                    _leaf(u).withElements { b in
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
