import PersistentCollections

extension Table {
    /// The IDs of every record in ID order (``RecordID``'s `<`: integers,
    /// then strings, then UUIDs), read from the map's keys without
    /// touching a record.
    ///
    ///     let ids = songs.sortedIDs()
    ///     for (id, song) in zip(ids, songs.records.values(forKeys: ids)) { … }
    ///
    /// - Complexity: O(n) when every ID is an integer (a radix sort of
    ///   their values), O(n log n) otherwise.
    public func sortedIDs() -> [RecordID] {
        records._sortedKeys()
    }

}

extension PersistentMap where Key == RecordID {
    /// The keys in ID order, as ``Table/sortedIDs()`` gives a table's.
    func _sortedKeys() -> [RecordID] {
        var integers: [Int64] = []
        integers.reserveCapacity(count)
        var others = false
        keys.forEach { id in
            if case .integer(let value) = id.kind { integers.append(value) } else { others = true }
        }
        guard !others else { return keys.sorted() }
        return Table._radixSorted(integers).map { RecordID($0) }
    }
}

extension Table {
    /// `values` in ascending order: an LSD radix sort over 11-bit digits
    /// of each value's distance from the smallest, with only as many
    /// passes as the span of the values needs (two for up to 4M
    /// consecutive IDs, six at most). O(n · passes).
    static func _radixSorted(_ values: [Int64]) -> [Int64] {
        // Signed order as unsigned: flip the sign bit.
        let signBit: UInt64 = 1 << 63
        var current = values.map { UInt64(bitPattern: $0) ^ signBit }
        guard let smallest = current.min(), let largest = current.max() else { return [] }
        let span = largest - smallest
        for i in current.indices { current[i] -= smallest }
        let digitBits: UInt64 = 11
        let mask = UInt64(1 << digitBits - 1)
        var next = current
        var starts = [Int](repeating: 0, count: Int(mask) + 2)
        var shift: UInt64 = 0
        while shift < 64, span >> shift != 0 {
            for i in starts.indices { starts[i] = 0 }
            for value in current { starts[Int((value >> shift) & mask) + 1] += 1 }
            for digit in 0...Int(mask) { starts[digit + 1] += starts[digit] }
            for value in current {
                let digit = Int((value >> shift) & mask)
                next[starts[digit]] = value
                starts[digit] += 1
            }
            swap(&current, &next)
            shift += digitBits
        }
        return current.map { Int64(bitPattern: ($0 + smallest) ^ signBit) }
    }
}
