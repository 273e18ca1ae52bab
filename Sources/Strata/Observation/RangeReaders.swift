/// The observers that read ranges of one index, found by an entry: which
/// ranges contain it.
///
/// The ranges are kept sorted by lower bound, beside the highest upper
/// bound among each prefix, so a lookup is a binary search and a walk
/// back over the ranges that can still reach the entry: O(log r + the
/// ranges walked), one or two for the disjoint ranges of equality queries.
/// The order is rebuilt, O(r log r), on the first lookup after a change.
struct RangeReaders {
    private var ranges: [(observer: Int, range: Range<IndexEntry>)] = []
    /// `reach[i]`: the highest upper bound among `ranges[0...i]`.
    private var reach: [IndexEntry] = []
    private var sorted = true

    var isEmpty: Bool { ranges.isEmpty }

    mutating func insert(_ range: Range<IndexEntry>, of observer: Int) {
        ranges.append((observer, range))
        sorted = false
    }

    mutating func remove(_ range: Range<IndexEntry>, of observer: Int) {
        guard let i = ranges.firstIndex(where: { $0.observer == observer && $0.range == range }) else { return }
        ranges.remove(at: i)
        sorted = false
    }

    /// Adds to `found` every observer with a range containing `entry`.
    mutating func observers(containing entry: IndexEntry, into found: inout Set<Int>) {
        if !sorted { sort() }
        // The first range whose lower bound is above the entry.
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].range.lowerBound <= entry { low = middle + 1 } else { high = middle }
        }
        var i = low - 1
        while i >= 0, entry < reach[i] {
            if ranges[i].range.contains(entry) { found.insert(ranges[i].observer) }
            i -= 1
        }
    }

    private mutating func sort() {
        ranges.sort { $0.range.lowerBound < $1.range.lowerBound }
        reach = []
        reach.reserveCapacity(ranges.count)
        for (_, range) in ranges {
            reach.append(reach.last.map { Swift.max($0, range.upperBound) } ?? range.upperBound)
        }
        sorted = true
    }

    /// Every observer with a range here.
    var allObservers: Set<Int> { Set(ranges.map(\.observer)) }
}
