#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Freeing a collection frees its elements, and an element may hold a
// collection of its own, which frees its elements in turn: a value nested
// thousands deep (a JSON-like value, lists of lists) is freed by as many
// node deinits one inside another, and overflowed the stack (a debug
// build at 12,000 levels, an optimized one past 30,000). So a node that
// destroys its elements counts, per thread, how many such destructions
// are running one inside another; past `deferralDepth` it moves its
// elements into a box set aside instead, and the outermost destruction
// frees the boxes one after another once its own elements are done. The
// stack then holds at most `deferralDepth` of them, however deep the
// value; a shallow value is freed as before, at the cost of a
// thread-local read per node.

/// A thread's destructions in progress (see above): how many run one
/// inside another, and the boxes set aside for the outermost to free.
@usableFromInline
struct _NestedReleaseState {
    @usableFromInline var depth = 0
    @usableFromInline var setAside: [AnyObject] = []

    @usableFromInline init() {}
}

/// Elements moved out of a node that was freed deep inside others, freed
/// with this box: `destroy` deinitializes them in place.
@usableFromInline
final class _SetAsideElements {
    @usableFromInline let storage: UnsafeMutableRawPointer
    @usableFromInline let destroy: (UnsafeMutableRawPointer) -> Void

    @usableFromInline
    init(storage: UnsafeMutableRawPointer, destroy: @escaping (UnsafeMutableRawPointer) -> Void) {
        self.storage = storage
        self.destroy = destroy
    }

    deinit {
        destroy(storage)
        storage.deallocate()
    }
}

/// A part of a node (a branch's separators) moved out of a node that was
/// freed deep inside others, freed with this box.
@usableFromInline
final class _SetAsideValue<Value> {
    @usableFromInline let value: Value

    @usableFromInline
    init(_ value: Value) { self.value = value }
}

@usableFromInline
enum _NestedRelease {
    /// Destructions one inside another past which elements are set aside.
    @usableFromInline static var deferralDepth: Int { 64 }

    /// The key of each thread's state; a thread's state is freed with it.
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, _freeNestedReleaseState)
        precondition(status == 0, "pthread_key_create failed (\(status))")
        return key
    }()

    /// This thread's state, made at its first use.
    @usableFromInline
    static var state: UnsafeMutablePointer<_NestedReleaseState> {
        if let existing = pthread_getspecific(key) {
            return existing.assumingMemoryBound(to: _NestedReleaseState.self)
        }
        let made = UnsafeMutablePointer<_NestedReleaseState>.allocate(capacity: 1)
        made.initialize(to: _NestedReleaseState())
        pthread_setspecific(key, made)
        return made
    }

    /// Runs `destroyInPlace`, which destroys elements (and so may free
    /// nested collections), or, this deep inside other destructions, keeps
    /// what `setAside` returns (the elements moved into a box) for the
    /// outermost destruction to free once it is done.
    @usableFromInline @inline(never)
    static func destroying(_ destroyInPlace: () -> Void, orSettingAside setAside: () -> AnyObject) {
        let state = Self.state
        if state.pointee.depth >= deferralDepth {
            state.pointee.setAside.append(setAside())
            return
        }
        state.pointee.depth += 1
        destroyInPlace()
        if state.pointee.depth == 1 {
            // The outermost: free what was set aside, each at this depth
            // (what they set aside in turn joins the list).
            while let box = state.pointee.setAside.popLast() { withExtendedLifetime(box) {} }
        }
        state.pointee.depth -= 1
    }
}

/// Frees a thread's state when the thread ends.
#if canImport(Darwin)
private func _freeNestedReleaseState(_ raw: UnsafeMutableRawPointer) {
    let state = raw.assumingMemoryBound(to: _NestedReleaseState.self)
    state.deinitialize(count: 1)
    state.deallocate()
}
#else
private func _freeNestedReleaseState(_ raw: UnsafeMutableRawPointer?) {
    guard let state = raw?.assumingMemoryBound(to: _NestedReleaseState.self) else { return }
    state.deinitialize(count: 1)
    state.deallocate()
}
#endif

extension UnsafeMutablePointer {
    /// Deinitializes `count` elements here, as `deinitialize(count:)`
    /// does, from a node's `deinit`: through ``_NestedRelease``, so that
    /// elements holding collections nested without bound are freed without
    /// a recursion as deep as they nest. Trivial elements need nothing.
    @inlinable
    func _destroyElementsOfNode(count: Int) {
        guard !_isPOD(Pointee.self), count > 0 else { return }
        _NestedRelease.destroying {
            deinitialize(count: count)
        } orSettingAside: {
            let storage = UnsafeMutableRawPointer.allocate(
                byteCount: count * MemoryLayout<Pointee>.stride,
                alignment: MemoryLayout<Pointee>.alignment
            )
            storage.bindMemory(to: Pointee.self, capacity: count).moveInitialize(from: self, count: count)
            return _SetAsideElements(storage: storage) {
                $0.assumingMemoryBound(to: Pointee.self).deinitialize(count: count)
            }
        }
    }
}
