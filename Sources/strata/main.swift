// The `strata` command: see StrataCommands.
import Foundation
import StrataCommands

#if canImport(CJemalloc)
import CJemalloc
import CJemallocOptions

// jemalloc replaces the system's malloc in this process (linking it is
// enough): a command lives seconds, decodes hundreds of megabytes on every
// core and frees much of it on other threads than the ones that allocated
// it, where glibc's allocator waits on its arena locks (a sixth of
// `strata verify`'s samples). The reference keeps the linker from dropping
// the library as unused; the options (CJemallocOptions) keep freed pages
// for reuse. Builds under AddressSanitizer leave jemalloc out (Package.swift,
// STRATA_SANITIZED).
_ = mallctl
_ = strata_jemalloc_options()
#endif

// A reader that goes away (`strata export | head`) is an EPIPE for the
// output to handle, not a signal that kills the process.
signal(SIGPIPE, SIG_IGN)

exit(await StrataCommand.run(Array(CommandLine.arguments.dropFirst())))
