import Foundation
import Strata
import Testing

/// Values a store accepts that ordinary ones do not exercise: timestamps
/// that are not ordinary numbers, options outside their range.
@Suite("Store: odd timestamps and options", .serialized)
struct StoreOddValueTests {
    @Test("a transaction stamped NaN or ±infinity is durable, reads back, verifies as sound, and lies in no time range")
    func oddTimestamps() async throws {
        let path = temporaryStorePath("odd-times")
        defer { removeStore(path) }
        let stamps = [Double.nan, -.nan, .infinity, -.infinity, -0.0, .leastNonzeroMagnitude, .nan]
        let store = try await Store.open(at: path, options: testOptions())
        for (n, seconds) in stamps.enumerated() {
            var builder = TransactionBuilder(on: store.current)
            try builder.insert(["n": .int(Int64(n))], id: RecordID(n), into: "t")
            try await store.commit(builder.transaction(timestamp: Date(timeIntervalSinceReferenceDate: seconds)))
        }
        // The deep check compared each record's summary with the history's:
        // a NaN date is not `==` to itself, and it called a sound log damaged.
        try await store.verify()
        try await store.close()
        let again = try await Store.open(at: path, options: testOptions())
        try await again.verify()
        let read = try await again.transactions(from: 1, limit: stamps.count)
        #expect(
            read.map { $0.timestamp.timeIntervalSinceReferenceDate.bitPattern } == stamps.map { $0.bitPattern }
        )
        #expect(again.current[table: "t"].count == stamps.count)
        // A timestamp that is no number lies in no time range, and at no date.
        let seconds = { (t: Double) in Date(timeIntervalSinceReferenceDate: t) }
        let since = try await again.history(HistoryFilter(from: seconds(-1)), limit: 10).map(\.t)
        #expect(since == [6, 5, 3])
        let until = try await again.history(HistoryFilter(until: seconds(1)), limit: 10).map(\.t)
        #expect(until == [6, 5, 4])
        let inRange = try await again.history(HistoryFilter(from: seconds(-1), until: seconds(1)), limit: 10).map(\.t)
        #expect(inRange == [6, 5])
        #expect(try await again.database(at: seconds(0)).basis == 5)
        #expect(try await again.database(at: seconds(1)).basis == 6)
        try await again.close()
    }

    @Test("a transaction and its summary equal themselves and hash alike whatever their timestamp")
    func reflexiveEquality() {
        for seconds in [Double.nan, -.nan, .signalingNaN, .infinity, 0, -0.0, 1e300] {
            let transaction = Transaction(t: 1, basis: 0, timestamp: Date(timeIntervalSinceReferenceDate: seconds))
            let copy = transaction
            #expect(transaction == copy, "\(seconds)")
            #expect(transaction.summary == copy.summary, "\(seconds)")
            #expect(Set([transaction, copy]).count == 1, "\(seconds)")
        }
        let early = Transaction(t: 1, basis: 0, timestamp: Date(timeIntervalSinceReferenceDate: 1))
        var later = early
        later.timestamp = Date(timeIntervalSinceReferenceDate: 2)
        #expect(early != later)
        #expect(early.summary != later.summary)
    }

    @Test("a compression level outside zstd's range snapshots at the nearest level", arguments: [Int32(30), -200_000])
    func compressionLevelOutOfRange(level: Int32) async throws {
        let path = temporaryStorePath("odd-level")
        defer { removeStore(path) }
        var options = testOptions()
        options.compressionLevel = level
        options.snapshotEveryTransactions = 5
        let store = try await Store.open(at: path, options: options)
        for i in 1...20 {
            try await store.transact { try $0.upsert(["i": .int(Int64(i))], id: RecordID(i), into: "t") }
        }
        // Every snapshot failed (the background ones silently, each after
        // encoding the whole value), and the log grew without one.
        _ = try await store.snapshot()
        #expect(await store.statistics.lastSnapshotBasis == 20)
        try await store.close()
        let again = try await Store.open(at: path, options: options)
        #expect(again.current[table: "t"].count == 20)
        try await again.close()
    }
}
