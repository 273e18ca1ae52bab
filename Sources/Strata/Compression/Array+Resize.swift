extension [UInt8] {
    /// Grows (with zeros) or shrinks to `count` elements, keeping capacity.
    ///
    /// Grows by appending slices of a zero block: that path is a memcpy even
    /// in unoptimized builds, where appending `repeatElement` runs
    /// element by element.
    mutating func resize(to count: Int) {
        if count < self.count {
            removeLast(self.count - count)
            return
        }
        reserveCapacity(count)
        while self.count < count {
            append(contentsOf: zeroBlock[0..<Swift.min(zeroBlock.count, count - self.count)])
        }
    }
}

private let zeroBlock = [UInt8](repeating: 0, count: 1 << 16)
