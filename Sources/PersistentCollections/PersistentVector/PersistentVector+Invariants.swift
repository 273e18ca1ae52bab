extension PersistentVector {
    /// Checks every structural invariant and traps on the first violation:
    /// counts, the tail, node kinds per height, no empty nodes, regular
    /// nodes left-dense (every child but the last complete), size tables
    /// consistent and never ahead of the radix guess, and the height bound
    /// (log16 n + 2). The RRB search-step bound itself is a property of the
    /// concatenation plan (each rebalanced level within `extraSearchSteps`
    /// nodes of optimal), tested on the plan directly. O(n).
    public func _invariantCheck() {
        precondition(_count >= 0, "negative count")
        if let tail = _tail {
            precondition(tail.isLeaf, "tail is not a leaf")
            precondition(tail.count <= _Node.branching, "tail over 32 elements")
            precondition(tail.slotCapacity >= tail.count, "tail over capacity")
        }
        guard let root = _root else {
            precondition(_count == _tailCount, "no tree, but count \(_count) != tail \(_tailCount)")
            return
        }
        let size = root._invariantCheck(height: _height)
        precondition(size == _treeCount, "tree holds \(size) elements, expected \(_treeCount)")
        precondition(root.isLeaf || root.count > 1 || _height == 0, "root branch with a single child")
        // Height bound: every level below the root keeps at least half the
        // branching on average, so the height stays within log16(n) + 2.
        var bound = 2
        var reach = 16
        while reach < size {
            reach = reach.multipliedReportingOverflow(by: 16).overflow ? .max : reach * 16
            bound += 1
        }
        precondition(_height <= bound, "height \(_height) for \(size) elements exceeds \(bound)")
    }
}

extension _VectorNode {
    /// Checks this subtree; returns its element count.
    func _invariantCheck(height: Int) -> Int {
        let alignment = isLeaf ? MemoryLayout<Element>.alignment : MemoryLayout<_VectorNode>.alignment
        precondition(
            Int(bitPattern: UnsafeRawPointer(isLeaf ? UnsafeRawPointer(_elements) : UnsafeRawPointer(_children)))
                % alignment == 0,
            "node storage misaligned"
        )
        precondition(count >= 1, "empty node at height \(height)")
        precondition(count <= slotCapacity && slotCapacity <= Self.branching, "node over capacity")
        if height == 0 {
            precondition(isLeaf, "branch at height 0")
            return count
        }
        precondition(!isLeaf, "leaf at height \(height)")
        var total = 0
        let complete = Self.capacity(height: height - 1)
        for i in 0..<count {
            let child = _children[i]
            let size = child._invariantCheck(height: height - 1)
            precondition(size <= complete, "child \(i) at height \(height) holds more than a complete subtree")
            if !isRelaxed && i < count - 1 {
                precondition(size == complete, "regular node with an incomplete child at \(i), height \(height)")
            }
            total += size
            if isRelaxed {
                // Strictly increasing, and never ahead of the radix guess:
                // the lookup scans forward from `index >> shift`.
                precondition(_sizes[i] == total, "size table wrong at \(i), height \(height)")
                precondition(_sizes[i] <= (i + 1) * complete, "size table ahead of the radix guess at \(i)")
            }
        }
        if isRelaxed {
            precondition(
                slotCapacity == Self.branching,
                "relaxed branch of capacity \(slotCapacity) at height \(height)"
            )
            for i in count..<Self.branching {
                precondition(_sizes[i] == .max, "size table slot \(i) past the count is not Int.max, height \(height)")
            }
        }
        return total
    }
}

extension PersistentVector {
    /// The slot counts the concatenation rebalancer packs a level of nodes
    /// with the given slot counts into. Exposed for tests of its bound: the
    /// result has at most two nodes more than ⌈total / 32⌉.
    public static func _concatenationPlan(_ counts: [Int]) -> [Int] {
        counts.withUnsafeBufferPointer { counts in
            Array(unsafeUninitializedCapacity: counts.count) { sizes, planned in
                planned = _Node.concatPlan(counts, into: sizes)
            }
        }
    }
}
