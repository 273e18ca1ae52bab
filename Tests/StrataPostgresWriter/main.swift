// A writer process of the PostgreSQL tests, run (and killed) by them:
//
//   StrataPostgresWriter <url> <store> <writer> <count> <ack file> [<stop file>]
//
// commits `count` single-record transactions (record writer·10⁶ + n of
// table "rows", n = 0, 1, …) through a Peer, appending "<transaction ID> <t>"
// to the ack file once each commit has returned; it ends early, with
// status 0, once the stop file exists. An error (a server restarting, a
// connection lost) is waited out and the commit tried again; a record found
// already there is one whose commit was stored without an answer.
import Foundation
import Strata
import StrataPostgres

@main
struct StrataPostgresWriter {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count == 6 || arguments.count == 7, let writer = Int(arguments[3]),
            let count = Int(arguments[4])
        else {
            FileHandle.standardError.write(
                Data("usage: StrataPostgresWriter <url> <store> <writer> <count> <ack file> [<stop file>]\n".utf8)
            )
            exit(2)
        }
        let stopFile = arguments.count == 7 ? arguments[6] : nil
        var settings = try PostgresSettings(url: arguments[1])
        // A server restarting under the test: give up on a request soon.
        settings.operationTimeout = .seconds(3)
        let ack = open(arguments[5], O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard ack >= 0 else {
            FileHandle.standardError.write(Data("cannot open \(arguments[5])\n".utf8))
            exit(1)
        }
        let peer = try await openPeer(store: arguments[2], settings: settings)
        var n = 0
        while n < count {
            if let stopFile, access(stopFile, F_OK) == 0 { break }
            let id = RecordID(writer * 1_000_000 + n)
            do {
                let report = try await peer.transact(message: "writer \(writer) #\(n)") {
                    try $0.insert(["writer": .int(Int64(writer)), "n": .int(Int64(n))], id: id, into: "rows")
                }
                let line = Array("\(report.transaction.id.uuidString) \(report.transaction.t)\n".utf8)
                guard line.withUnsafeBytes({ write(ack, $0.baseAddress, $0.count) }) == line.count else { exit(1) }
                n += 1
            } catch ApplyError.recordExists {
                n += 1
            } catch {
                FileHandle.standardError.write(Data("writer \(writer): \(error); trying again\n".utf8))
                try await Task.sleep(for: .milliseconds(100))
                _ = try? await peer.catchUp()
            }
        }
        close(ack)
    }

    /// The store's peer, waiting out a server that is not there yet.
    static func openPeer(store: String, settings: PostgresSettings) async throws -> Peer {
        var attempts = 0
        while true {
            do {
                return try await Peer.open(try await PostgresHistoryStorage.open(store: store, settings: settings))
            } catch {
                attempts += 1
                if attempts > 100 { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }
}
