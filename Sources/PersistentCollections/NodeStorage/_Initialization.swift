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
            // The retains below wait for their objects one at a time.
            _prefetchReferents(of: UnsafeRawPointer(source), byteCount: count &* MemoryLayout<Pointee>.stride)
            for i in 0..<count { (self + i).initialize(to: source[i]) }
        }
    }
}

extension UnsafeMutablePointer where Pointee: AnyObject {
    /// Releases the `count` references here, leaving the memory
    /// uninitialized: what `deinitialize(count:)` does, one `release` call
    /// each. A generic class's `deinit` is not specialized, and there
    /// `deinitialize` (even of one element) goes through the runtime's
    /// `swift_arrayDestroy` and the type's value witnesses; a reference
    /// loaded as `Unmanaged<AnyObject>` (a class reference and an
    /// `AnyObject` are both one pointer) is released without either, and
    /// without a generic load that would look up `Unmanaged<Pointee>`.
    @inlinable @inline(__always)
    func _deinitializeReferences(count: Int) {
        let raw = UnsafeRawPointer(self)
        _prefetchReferents(of: raw, byteCount: count &* MemoryLayout<AnyObject>.stride)
        for i in 0..<count {
            raw.load(fromByteOffset: i &* MemoryLayout<AnyObject>.stride, as: Unmanaged<AnyObject>.self).release()
        }
    }
}
