// Commits single-record transactions to the store at argv[1] forever,
// printing each commit's t on stdout once `transact` returned (so it is
// durable), until killed. Used by the store's crash tests.
import Foundation
import Strata

@main
struct StrataCrashWriter {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: StrataCrashWriter <store directory>\n".utf8))
            exit(2)
        }
        var options = StoreOptions()
        options.createIfMissing = true
        options.snapshotEveryTransactions = 25
        options.segmentSize = 4_096
        options.durability = arguments.count >= 3 && arguments[2] == "grouped" ? .grouped : .everyCommit
        let store = try await Store.open(at: arguments[1], options: options)
        while true {
            let next = store.current.basis + 1
            let report = try await store.transact(message: "write \(next)") { builder in
                let id = RecordID(Int(next))
                try builder.insert(
                    ["n": .int(next), "text": .string(String(repeating: "x", count: Int(next % 300)))],
                    id: id,
                    into: "items"
                )
                if next > 1, next % 3 == 0 {
                    try builder.update(RecordID(Int(next - 1)), in: "items", [.set("seen", .bool(true))])
                }
            }
            FileHandle.standardOutput.write(Data("\(report.transaction.t)\n".utf8))
        }
    }
}
