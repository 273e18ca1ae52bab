// The `strata` command: see StrataCommands.
import CJemalloc
import Foundation
import StrataCommands

// jemalloc replaces the system's malloc in this process (linking it is
// enough): a command lives seconds, decodes hundreds of megabytes on every
// core and frees them from other threads, where glibc's allocator spent a
// fifth of `strata verify` (on a 1M-record store: 4.2 s, 3.3–3.5 s with
// jemalloc; `strata import` 5.5 s and 1.0 GB resident, 5.3 s and 0.8 GB).
// The reference keeps the linker from dropping the library as unused.
_ = mallctl

// A reader that goes away (`strata export | head`) is an EPIPE for the
// output to handle, not a signal that kills the process.
signal(SIGPIPE, SIG_IGN)

exit(await StrataCommand.run(Array(CommandLine.arguments.dropFirst())))
