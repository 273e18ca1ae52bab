/// Holds a value until ``drop()``, so that the thread that drops it frees
/// what only it held.
///
/// Handing a value to another thread to be freed there by capturing it in
/// a closure does not work: the closure's copy and the caller's share it,
/// and whichever lets go last frees it. The closure usually runs at once on
/// an idle queue, so the last is usually the caller: `strata import` freed
/// each batch's previous value on its committing task (a sixth of its
/// samples) that way. A parcel takes the value whole (`consuming`), and
/// only `drop()` lets go of it.
///
///     let parcel = Parcel(consume report)
///     releaseQueue.async { parcel.drop() }
package final class Parcel<Contents>: @unchecked Sendable {
    // Written once by `drop()`, on the one thread that drops it.
    private var contents: Contents?

    /// A parcel holding `contents`.
    package init(_ contents: consuming Contents) {
        self.contents = consume contents
    }

    /// Lets go of the contents. Call it once, on the thread that is to free them.
    package func drop() {
        contents = nil
    }
}
