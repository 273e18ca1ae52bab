/// How much bulk data a test moves. `make test` runs every test twice: in a
/// debug build (with the collections' debug checks) and optimized under
/// AddressSanitizer. In the debug build generic code handles multi-megabyte
/// values a byte at a time, so tests whose cost is their data size divide it
/// there, keeping the proportions they test (a record larger than a log
/// segment, snapshots due by log bytes); the optimized pass runs them whole.
/// Limits that do not scale differ between the two: a snapshot chunk is
/// 1 MiB, so whole-size records each fill chunks of their own, while the
/// debug pass's share chunks.
enum TestScale {
    /// 1 in optimized builds, 8 in debug builds.
    static let divisor: Int = {
        #if DEBUG
        return 8
        #else
        return 1
        #endif
    }()
}
