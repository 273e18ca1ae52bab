import Foundation
import Strata
import Testing

/// The log reserves its active segment's blocks ahead of the appends (so a
/// durable commit's sync writes no new file size). What a crash leaves of
/// that reservation, zeros past the last record, is the log's end; a clean
/// close and a rollover leave every segment exactly its records.
@Suite("Store reserved log space", .serialized)
struct StoreReservedSpaceTests {
    static func size(_ file: String) throws -> Int {
        try (FileManager.default.attributesOfItem(atPath: file)[.size] as? NSNumber)?.intValue ?? -1
    }

    static func append(_ bytes: [UInt8], to file: String) throws {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: file))
        defer { try? handle.close() }
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(bytes))
    }

    static func options() -> StoreOptions {
        var options = testOptions(.everyCommit)
        options.segmentSize = 4_096
        return options
    }

    @Test(
        "zeros a reservation leaves past the last segment's records are its end, cut at open; other zeros are a torn tail or damage"
    )
    func zeroTails() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: Self.options())
        for n in 0..<40 {
            try await store.transact {
                try $0.insert(
                    ["n": .int(Int64(n)), "pad": .string(String(repeating: "é", count: 150))],
                    id: RecordID(n),
                    into: "t"
                )
            }
        }
        let value = store.current
        try await store.close()
        let segments = logSegments(path)
        #expect(segments.count >= 3)
        let sizes = try segments.map(Self.size)

        // What a crash after reserving leaves: zeros to a multiple of the
        // alignment (4 KiB) past the last segment's records.
        let last = segments[segments.count - 1]
        let lastSize = try Self.size(last)
        try Self.append([UInt8](repeating: 0, count: (4_096 - lastSize % 4_096) % 4_096 + (1 << 20)), to: last)
        let reopened = try await Store.open(at: path, options: Self.options())
        #expect(reopened.warnings.isEmpty, "\(reopened.warnings)")
        #expect(reopened.current == value)
        #expect(try segments.map(Self.size) == sizes, "open cuts the zeros")
        try await reopened.transact { try $0.insert(["n": 40], id: 40, into: "t") }
        let after = reopened.current
        try await reopened.close()

        // Zeros the reservation cannot have left (a size off the alignment)
        // are a torn tail, reported.
        let newest = logSegments(path).last!
        var end = try Self.size(newest)
        let odd = end % 4_096 == 4_095 ? 2 : 1
        try Self.append([UInt8](repeating: 0, count: odd), to: newest)
        let zeroed = try await Store.open(at: path, options: Self.options())
        let newestName = URL(fileURLWithPath: newest).lastPathComponent
        #expect(zeroed.warnings == [.tornTail(segment: newestName, offset: end, bytes: odd)])
        #expect(zeroed.current == after)
        try await zeroed.close()

        // In a sealed segment zeros are damage: a rollover cuts its reservation.
        let sealed = segments[0]
        let sealedBytes = try Data(contentsOf: URL(fileURLWithPath: sealed))
        try Self.append([UInt8](repeating: 0, count: 4_096 - sealedBytes.count % 4_096), to: sealed)
        await #expect {
            _ = try await Store.open(at: path, options: Self.options())
        } throws: { error in
            guard case .corruptLog(let segment, let offset, _)? = error as? StoreError else { return false }
            return segment == URL(fileURLWithPath: sealed).lastPathComponent && offset == sealedBytes.count
        }
        try sealedBytes.write(to: URL(fileURLWithPath: sealed))
        let restored = try await Store.open(at: path, options: Self.options())
        #expect(restored.warnings.isEmpty && restored.current == after)
        try await restored.close()

        // Zeros, then the start of a frame that never finished.
        end = try Self.size(newest)
        try Self.append([UInt8](repeating: 0, count: 5_000) + [0x10, 0, 0, 0, 1, 2, 3], to: newest)
        let torn = try await Store.open(at: path, options: Self.options())
        #expect(torn.warnings == [.tornTail(segment: newestName, offset: end, bytes: 5_007)])
        #expect(torn.current == after)
        try await torn.close()
        #expect(try Self.size(newest) == end)
    }

    #if os(Linux)
    @Test("while the store is open its active segment is reserved ahead of the appends; close leaves only the records")
    func reservedWhileOpen() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        var options = testOptions(.everyCommit)
        options.segmentSize = 8 << 20
        let store = try await Store.open(at: path, options: options)
        try await store.transact { try $0.insert(["n": 1], id: 1, into: "t") }
        let segment = logSegments(path).last!
        #expect(try Self.size(segment) == 1 << 20)
        // A commit past the reservation reserves the next step.
        try await store.transact {
            try $0.insert(["blob": .bytes([UInt8](repeating: 7, count: 1 << 20))], id: 2, into: "t")
        }
        #expect(try Self.size(segment) == 2 << 20)
        let logBytes = await store.statistics.logBytes
        try await store.close()
        #expect(try Self.size(segment) == logBytes)
        let reopened = try await Store.open(at: path, options: options)
        #expect(reopened.warnings.isEmpty && reopened.current.basis == 2)
        try await reopened.close()
    }
    #endif
}
