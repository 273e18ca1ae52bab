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

// An argument that is not UTF-8 (a path named in another encoding) would
// be read with replacement characters: another path, perhaps a new store.
for index in stride(from: 1, to: Int(CommandLine.argc), by: 1) {
    guard let argument = CommandLine.unsafeArgv[index], String(validatingCString: argument) == nil else { continue }
    let message = "argument \(index) is not valid UTF-8 (paths and names must be UTF-8)"
    FileHandle.standardError.write(Data("strata: \(message)\n".utf8))
    // With --json, the error is a document on standard output too.
    if CommandLine.arguments.dropFirst().prefix(while: { $0 != "--" }).contains("--json") {
        FileHandle.standardOutput.write(Data("{\"error\":\"\(message)\",\"status\":2}\n".utf8))
    }
    exit(2)
}

exit(await StrataCommand.run(Array(CommandLine.arguments.dropFirst())))
