extension _VectorNode {
    /// Checks this subtree; returns its element count.
    func _invariantCheck(height: Int) -> Int {
        _checkNode(height: height) { _children[$0]._invariantCheck(height: height - 1) }
    }

    /// Checks this node, at `height`, given the size of each child (each
    /// child's own check, or `size(height:)`); returns its element count.
    /// O(children).
    @usableFromInline
    @discardableResult
    func _checkNode(height: Int, childSize: (Int) -> Int) -> Int {
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
            precondition(_children[i].isLeaf == (height == 1), "child \(i) of the wrong kind at height \(height)")
            let size = childSize(i)
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
            precondition(_sizes[-1] == 0, "the word before the size table is not 0, height \(height)")
        }
        return total
    }

    /// Checks every node on the path from this root, at `height`, to the
    /// element at `index` (of this subtree), and with `withChildren` every
    /// child of those nodes too (what a concatenation repacks).
    /// O(height² × 32), × 32 with the children.
    @usableFromInline
    func _checkPath(height: Int, to index: Int, withChildren: Bool) {
        var node = self
        var height = height
        var relative = index
        while true {
            let h = height
            let size = node._checkNode(height: h) { node._children[$0].size(height: h - 1) }
            precondition(relative >= 0 && relative < size, "index \(relative) outside a subtree of \(size)")
            guard height > 0 else { return }
            if withChildren {
                for i in 0..<node.count {
                    let child = node._children[i]
                    child._checkNode(height: h - 1) { child._children[$0].size(height: h - 2) }
                }
            }
            // The node's sizes were just checked, so the lookup's own
            // search finds the child.
            let (slot, before) = node.locate(relative, height: height)
            node = node._children[slot]
            relative -= before
            height -= 1
        }
    }

    /// The slot counts `concatPlan(_:into:)` packs a level of nodes with
    /// slot counts `counts` into.
    static func concatPlan(_ counts: [Int]) -> [Int] {
        counts.withUnsafeBufferPointer { counts in
            Array(unsafeUninitializedCapacity: counts.count) { sizes, planned in
                planned = concatPlan(counts, into: sizes)
            }
        }
    }
}
