/// A small, fast, seedable generator (SplitMix64). Every benchmark workload
/// and property test derives from a seed, so a run can be repeated exactly
/// and a failing test replays from the seed it prints.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits. O(1).
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly distributed integer in `0..<bound`. O(1).
    public mutating func int(below bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// True with probability `percent` / 100. O(1).
    public mutating func chance(_ percent: Int) -> Bool {
        int(below: 100) < percent
    }

    /// `count` random bytes. O(count).
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            withUnsafeBytes(of: next()) { out.append(contentsOf: $0) }
        }
        out.removeLast(out.count - count)
        return out
    }
}
