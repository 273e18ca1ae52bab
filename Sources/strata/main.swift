// The `strata` command: see StrataCommands.
import Foundation
import StrataCommands

#if os(Linux)
// A command lives seconds and decodes hundreds of megabytes: glibc's
// default of handing freed memory back to the system at once makes the
// next allocations fault their pages in again. `mallopt` is not in the
// Glibc module; its parameters are M_TRIM_THRESHOLD (-1), M_TOP_PAD (-2)
// and M_MMAP_THRESHOLD (-3).
if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") {
    let mallopt = unsafeBitCast(symbol, to: (@convention(c) (Int32, Int32) -> Int32).self)
    _ = mallopt(-1, 1 << 30)
    _ = mallopt(-2, 64 << 20)
    _ = mallopt(-3, 32 << 20)  // glibc's largest
}
#endif

// A reader that goes away (`strata export | head`) is an EPIPE for the
// output to handle, not a signal that kills the process.
signal(SIGPIPE, SIG_IGN)

exit(await StrataCommand.run(Array(CommandLine.arguments.dropFirst())))
