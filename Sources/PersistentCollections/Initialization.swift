// Node copies go through these instead of `initialize(from:count:)` and
// `deinitialize(count:)`. Those lower to the runtime's
// `swift_arrayInitWithCopy` and `swift_arrayDestroy`, which copy or destroy
// one element at a time through the type's value witnesses (for a map item:
// a witness for the item, then one for each field, then the retain), even in
// code specialized for concrete types. A loop of single-element copies in
// specialized code is a load, a retain and a store per reference instead.

extension UnsafeMutablePointer {
    /// Initializes `count` elements here with copies of `source`'s, as
    /// `initialize(from:count:)` does: a `memcpy` for trivial types, else
    /// element by element. The regions must not overlap.
    @inlinable @inline(__always)
    func _initialize(copying source: UnsafePointer<Pointee>, count: Int) {
        if _isPOD(Pointee.self) {
            initialize(from: source, count: count)
        } else {
            for i in 0..<count { (self + i).initialize(to: source[i]) }
        }
    }
}

extension UnsafeMutablePointer where Pointee: AnyObject {
    /// Releases the `count` references here, leaving the memory
    /// uninitialized, one `release` each without a metadata lookup: what
    /// `deinitialize(count:)` does through the runtime, also in the
    /// unspecialized code of a generic class's `deinit`.
    @inlinable @inline(__always)
    func _deinitializeReferences(count: Int) {
        for i in 0..<count { (self + i).deinitialize(count: 1) }
    }
}
