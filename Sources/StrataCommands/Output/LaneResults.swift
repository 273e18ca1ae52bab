/// The results of a concurrent loop, one slot per iteration.
///
/// Safe because each iteration writes only its own slot, and the slots are
/// read only after the loop has returned (`concurrentPerform` joins its
/// iterations before it returns).
final class LaneResults<Element>: @unchecked Sendable {
    private var slots: [Element?]

    init(count: Int) { slots = Array(repeating: nil, count: count) }

    /// Sets slot `index`, from the iteration that owns it.
    func set(_ index: Int, _ element: Element) {
        slots.withUnsafeMutableBufferPointer { $0[index] = element }
    }

    /// Slot `index`, once the loop has returned.
    subscript(index: Int) -> Element { slots[index]! }
}
