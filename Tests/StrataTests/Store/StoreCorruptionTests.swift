import Foundation
import Strata
import Testing

@Suite("Store corruption")
struct StoreCorruptionTests {
    /// A store of `count` single-insert transactions, closed; returns the
    /// value after each t.
    static func makeStore(_ path: String, count: Int, snapshotAt: Int? = nil) async throws -> [Database] {
        let store = try await Store.open(at: path, options: testOptions())
        var values = [store.current]
        for n in 1...count {
            try await store.transact(message: "n\(n)") {
                try $0.insert(
                    ["n": .int(Int64(n)), "text": .string(String(repeating: "y", count: n * 7))],
                    id: RecordID(n),
                    into: "t"
                )
            }
            values.append(store.current)
            if n == snapshotAt { try await store.snapshot() }
        }
        try await store.close()
        return values
    }

    static func copyStore(_ from: String) -> String {
        let to = temporaryStorePath("copy")
        removeStore(to)
        try! FileManager.default.copyItem(atPath: from, toPath: to)
        return to
    }

    /// A store of `count` transactions whose writer died after the last
    /// commit returned, without closing: the manifest knows the log only
    /// through `count - 1` (what a clean close or an open recorded), so a
    /// last record cut short is a torn tail, not a lost acknowledged one.
    /// - Returns: the value after each t, and the last transaction's record size.
    static func makeStoreWithoutLastClose(_ path: String, count: Int) async throws -> ([Database], Int) {
        var values = try await makeStore(path, count: count - 1)
        let manifest = try Data(contentsOf: URL(fileURLWithPath: path + "/manifest"))
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "n\(count)") {
            try $0.insert(
                ["n": .int(Int64(count)), "text": .string(String(repeating: "y", count: count * 7))],
                id: RecordID(count),
                into: "t"
            )
        }
        values.append(store.current)
        let last = try await store.transaction(at: Int64(count))!
        try await store.close()
        try manifest.write(to: URL(fileURLWithPath: path + "/manifest"))
        return (values, 8 + BinaryCodec.encode(last).count)
    }

    @Test("a log cut at every byte of its last record reopens with the record before it")
    func tornTail() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let (values, lastRecordSize) = try await Self.makeStoreWithoutLastClose(path, count: 6)
        let segment = logSegments(path).last!
        let bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        let lastStart = bytes.count - lastRecordSize
        for cut in lastStart..<bytes.count {
            let copy = Self.copyStore(path)
            defer { removeStore(copy) }
            try bytes.prefix(cut).write(to: URL(fileURLWithPath: logSegments(copy).last!))
            let store = try await Store.open(at: copy, options: testOptions())
            #expect(store.current == values[5], "cut at \(cut)")
            if cut > lastStart {
                #expect(
                    store.warnings == [
                        .tornTail(segment: "00000000000000000001.log", offset: lastStart, bytes: cut - lastStart)
                    ]
                )
            }
            // Still writable, and the next open is clean.
            try await store.transact { try $0.insert(["n": 0], id: 100, into: "t") }
            try await store.close()
            let again = try await Store.open(at: copy, options: testOptions())
            #expect(again.warnings.isEmpty && again.current.basis == 6)
            try await again.close()
        }
    }

    @Test("damage before the last record refuses to open, naming segment and offset, unless asked to truncate")
    func midLogDamage() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await Self.makeStore(path, count: 6)
        let segment = logSegments(path).last!
        let original = try Data(contentsOf: URL(fileURLWithPath: segment))
        var random = SeededRandom(seed: 7)
        for trial in 0..<40 {
            let copy = Self.copyStore(path)
            defer { removeStore(copy) }
            var bytes = original
            // A byte inside the first three records (after the 24-byte header).
            let position = 24 + random.int(below: 150)
            bytes[position] ^= UInt8(1 + random.int(below: 255))
            try bytes.write(to: URL(fileURLWithPath: logSegments(copy).last!))
            do {
                let store = try await Store.open(at: copy, options: testOptions())
                Issue.record("trial \(trial): damage at \(position) opened at t \(store.current.basis)")
                try await store.close()
            } catch let error as StoreError {
                guard case .corruptLog(let name, _, _) = error else {
                    Issue.record("trial \(trial): \(error)")
                    continue
                }
                #expect(name == "00000000000000000001.log")
            }
            var recovering = testOptions()
            recovering.recovery = .truncateAtDamage
            let store = try await Store.open(at: copy, options: recovering)
            let basis = Int(store.current.basis)
            #expect(basis < 3, "trial \(trial)")
            #expect(store.current == values[basis], "trial \(trial): a prefix of the history")
            #expect(!store.warnings.isEmpty)
            try await store.close()
        }
    }

    @Test("a record damaged after open is refused when read back, naming segment and offset")
    func damageAfterOpen() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        _ = try await Self.makeStore(path, count: 6)
        var options = testOptions()
        options.cachedTransactionChanges = 0
        let store = try await Store.open(at: path, options: options)
        #expect(try await store.transaction(at: 1)?.message == "n1")
        let segment = logSegments(path).last!
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        bytes[24 + 8 + 30] ^= 0xFF  // inside the first record's payload
        try bytes.write(to: URL(fileURLWithPath: segment))
        do {
            _ = try await store.transaction(at: 1)
            Issue.record("a damaged record read back without error")
        } catch StoreError.corruptLog(let name, let offset, _) {
            #expect(name == "00000000000000000001.log" && offset == 24)
        }
        // Other records still read, and history stops at the damage with the same error.
        #expect(try await store.transaction(at: 2)?.message == "n2")
        await #expect(throws: StoreError.self) { try await store.history(limit: .max) }
        try await store.close()
    }

    @Test("damaged, missing or foreign snapshots fall back to older ones or the log")
    func snapshots() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await Self.makeStore(path, count: 8, snapshotAt: 3)
        let store = try await Store.open(at: path, options: testOptions())
        try await store.snapshot()
        try await store.close()
        #expect(snapshotFiles(path).count == 2)
        var random = SeededRandom(seed: 3)
        for trial in 0..<30 {
            let copy = Self.copyStore(path)
            defer { removeStore(copy) }
            let newest = snapshotFiles(copy).last!
            var bytes = try Data(contentsOf: URL(fileURLWithPath: newest))
            switch trial % 3 {
            // Trial 0 hits the format version: damage there is damage, not a newer file.
            case 0: bytes[trial == 0 ? 8 : random.int(below: bytes.count)] ^= 0x5A
            case 1: bytes = bytes.prefix(random.int(below: bytes.count))
            default: bytes = Data((0..<200).map { _ in UInt8(random.int(below: 256)) })
            }
            try bytes.write(to: URL(fileURLWithPath: newest))
            let reopened = try await Store.open(at: copy, options: testOptions())
            #expect(reopened.current == values[8], "trial \(trial)")
            #expect(reopened.warnings.count == 1, "trial \(trial): \(reopened.warnings)")
            try await reopened.close()
        }
        let copy = Self.copyStore(path)
        defer { removeStore(copy) }
        for file in snapshotFiles(copy) { try FileManager.default.removeItem(atPath: file) }
        let fromLog = try await Store.open(at: copy, options: testOptions())
        #expect(fromLog.current == values[8])
        try await fromLog.close()
    }

    @Test("garbage segments and newer formats are refused with a clear error")
    func foreignFiles() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        _ = try await Self.makeStore(path, count: 3)
        let garbage = Self.copyStore(path)
        defer { removeStore(garbage) }
        try Data((0..<500).map { UInt8($0 % 251) }).write(
            to: URL(fileURLWithPath: garbage + "/log/00000000000000000004.log")
        )
        await #expect(throws: StoreError.self) { try await Store.open(at: garbage, options: testOptions()) }

        let newer = Self.copyStore(path)
        defer { removeStore(newer) }
        let segment = URL(fileURLWithPath: logSegments(newer).first!)
        var bytes = [UInt8](try Data(contentsOf: segment))
        bytes[8] = 2
        // A file a newer build wrote: its header checksum holds.
        let checksum = CRC32C.checksum(bytes[0..<20])
        for i in 0..<4 { bytes[20 + i] = UInt8(truncatingIfNeeded: checksum >> (8 * i)) }
        try Data(bytes).write(to: segment)
        do {
            _ = try await Store.open(at: newer, options: testOptions())
            Issue.record("a newer segment opened")
        } catch let error as StoreError {
            #expect("\(error)".contains("format version 2"))
        }

        // The same byte damaged (checksum not matching) is damage, not a newer format.
        let damaged = Self.copyStore(path)
        defer { removeStore(damaged) }
        let snapshotless = URL(fileURLWithPath: logSegments(damaged).first!)
        var flipped = try Data(contentsOf: snapshotless)
        flipped[8] ^= 0x40
        try flipped.write(to: snapshotless)
        do {
            _ = try await Store.open(at: damaged, options: testOptions())
            Issue.record("a damaged segment header opened")
        } catch let error as StoreError {
            guard case .corruptLog = error else {
                Issue.record("damaged version read as \(error)")
                return
            }
        }
    }
}
