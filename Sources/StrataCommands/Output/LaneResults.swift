import Synchronization

/// The results of a concurrent loop, one slot per iteration, set from any
/// thread and read once the loop has returned.
final class LaneResults<Element: Sendable>: Sendable {
    private let slots: Mutex<[Element?]>

    init(count: Int) { slots = Mutex(Array(repeating: nil, count: count)) }

    /// Sets slot `index`, from the iteration that owns it.
    func set(_ index: Int, _ element: sending Element) {
        slots.withLock { $0[index] = element }
    }

    /// Slot `index`, once the loop has returned.
    subscript(index: Int) -> Element { slots.withLock { $0[index]! } }
}
