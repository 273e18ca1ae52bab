// The `strata` command: see StrataCommands.
import Foundation
import StrataCommands

exit(await StrataCommand.run(Array(CommandLine.arguments.dropFirst())))
