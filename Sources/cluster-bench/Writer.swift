import ArgumentParser
import Foundation
import Strata
import StrataPostgres

extension ClusterBench {
    /// One writer process of the commit-rate measurement: opens a peer on
    /// the store, says it is ready, waits for the start, commits one-record
    /// transactions for the given time and prints its commits and its
    /// commits per second.
    struct Writer: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A writer process (started by `measure`).")

        @Option var url: String
        @Option var store: String
        @Option var index: Int
        @Option(help: "Where the ready and go files are.") var directory: String
        @Option var milliseconds: Int

        func run() async throws {
            let peer = try await Peer.open(
                try await PostgresHistoryStorage.open(store: store, settings: try PostgresSettings(url: url))
            )
            guard FileManager.default.createFile(atPath: "\(directory)/ready-\(index)", contents: nil) else {
                throw ClusterBenchError.writerFailed
            }
            while !FileManager.default.fileExists(atPath: directory + "/go") {
                try await Task.sleep(for: .milliseconds(1))
            }
            let clock = ContinuousClock()
            let start = clock.now
            let window = Duration.milliseconds(milliseconds)
            var n = 0
            while clock.now - start < window {
                do {
                    try await peer.transact(message: "writer \(index) #\(n)") { builder in
                        try builder.insert(Self.record(n), id: RecordID(index * 10_000_000 + n), into: "songs")
                    }
                    n += 1
                } catch PeerError.tooManyAttempts {
                    // Other writers won every number for a while: not a
                    // commit, and no reason to stop.
                    continue
                }
            }
            let elapsed = clock.now - start
            print(n, Double(n) / elapsed.seconds)
        }

        /// The record each commit inserts: a small song.
        static func record(_ n: Int) -> Record {
            ["title": .string("Song \(n)"), "plays": .int(Int64(n)), "rating": 3]
        }
    }
}

extension ClusterBench.Writer {
    /// The encoded size of one writer's transaction, for the raw baseline.
    static func typicalPayload() -> [UInt8] {
        var builder = TransactionBuilder(on: Database())
        try? builder.insert(record(12_345), id: RecordID(12_345), into: "songs")
        return BinaryCodec.encode(builder.transaction(message: "writer 0 #12345"))
    }
}
