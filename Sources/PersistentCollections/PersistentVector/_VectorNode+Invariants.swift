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
