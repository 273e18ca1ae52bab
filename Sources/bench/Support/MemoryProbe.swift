import CJemalloc
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads how much memory the bench process holds: live heap bytes from
/// jemalloc (linked into this executable, so it serves every allocation) and
/// peak resident set size from the kernel.
enum MemoryProbe {
    /// Bytes currently allocated and not yet freed, from jemalloc's
    /// `stats.allocated`, refreshed by advancing its `epoch` first.
    static func allocatedBytes() -> Int {
        var epoch: UInt64 = 1
        _ = mallctl("epoch", nil, nil, &epoch, MemoryLayout<UInt64>.size)
        var allocated = 0
        var length = MemoryLayout<Int>.size
        let status = mallctl("stats.allocated", &allocated, &length, nil, 0)
        return status == 0 ? allocated : -1
    }

    /// Whether jemalloc answers (it does unless the bench was linked without it).
    static var hasAllocatorStatistics: Bool { allocatedBytes() >= 0 }

    /// The peak resident set size since start or the last ``resetPeak()``,
    /// in bytes (`VmHWM` on Linux; `ru_maxrss` elsewhere, which cannot reset).
    static func peakResidentBytes() -> Int {
        #if os(Linux)
        return statusField("VmHWM:") ?? -1
        #else
        var usage = rusage()
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss)
        #endif
    }

    /// The current resident set size in bytes (`VmRSS`), or -1 where unknown.
    static func residentBytes() -> Int {
        #if os(Linux)
        return statusField("VmRSS:") ?? -1
        #else
        return -1
        #endif
    }

    /// Resets the kernel's peak-RSS mark to the current RSS, so the next
    /// phase's peak is its own. Returns false where unsupported.
    @discardableResult
    static func resetPeak() -> Bool {
        #if os(Linux)
        let fd = open("/proc/self/clear_refs", O_WRONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return write(fd, "5", 1) == 1
        #else
        return false
        #endif
    }

    #if os(Linux)
    private static func statusField(_ name: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            return Int(line.dropFirst(name.count).filter(\.isNumber)).map { $0 * 1024 }
        }
        return nil
    }
    #endif
}
