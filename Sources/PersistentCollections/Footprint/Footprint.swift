/// Bytes held by a structure that shares storage with others: what it
/// alone holds, and what it shares with structures counted before it.
public struct Footprint: Hashable, Sendable {
    /// Bytes no structure counted earlier holds.
    public var unique: Int
    /// Bytes already counted for an earlier structure, shared with it.
    public var shared: Int

    /// A footprint of `unique` and `shared` bytes.
    public init(unique: Int = 0, shared: Int = 0) {
        self.unique = unique
        self.shared = shared
    }

    /// Everything the structure reaches: unique plus shared.
    public var total: Int { unique + shared }

    /// The sum of two footprints.
    public static func + (a: Footprint, b: Footprint) -> Footprint {
        Footprint(unique: a.unique + b.unique, shared: a.shared + b.shared)
    }

    /// Adds `b` to `a`.
    public static func += (a: inout Footprint, b: Footprint) { a = a + b }
}

/// Counts the memory of many persistent collections that share nodes, each
/// allocation once: count the newest value first, then older ones, and each
/// older one's ``Footprint/unique`` bytes are what keeping it costs.
///
/// Allocations are recognised by identity (a node, an array buffer), so the
/// counted structures must stay alive while the counter is in use. Sizes are
/// the bytes requested from the allocator (object header included), not the
/// allocator's rounded size classes.
///
/// Memory: one dictionary entry per distinct allocation seen.
public final class FootprintCounter {
    /// Subtree bytes of every node seen, by node identity.
    private var subtrees: [ObjectIdentifier: Int] = [:]
    /// Bytes of every out-of-line buffer seen, by address.
    private var buffers: [UnsafeRawPointer: Int] = [:]

    /// An empty counter.
    public init() {}

    /// Counts a buffer at `address` of `bytes` bytes: unique the first
    /// time it is seen, shared after. O(1).
    public func countBuffer(at address: UnsafeRawPointer, bytes: Int) -> Footprint {
        if let seen = buffers[address] { return Footprint(shared: seen) }
        buffers[address] = bytes
        return Footprint(unique: bytes)
    }

    /// Counts an array's buffer (header and capacity), shared between
    /// copies of the array until one of them is mutated. O(1).
    public func countArray<Element>(_ array: [Element]) -> Footprint {
        guard array.capacity > 0 else { return Footprint() }
        let address = array.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
        guard let address else { return Footprint() }
        return countBuffer(at: address, bytes: 32 + array.capacity * MemoryLayout<Element>.stride)
    }

    /// The recorded subtree bytes of `node`, when seen before.
    func seenSubtree(_ node: AnyObject) -> Int? { subtrees[ObjectIdentifier(node)] }

    /// Records the subtree bytes of a node just counted.
    func recordSubtree(_ node: AnyObject, bytes: Int) { subtrees[ObjectIdentifier(node)] = bytes }
}
