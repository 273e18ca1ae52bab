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
        "zeros past the last record of any segment are its end, cut at open; zeros then a partial frame are a torn tail"
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

        // What a crash after reserving leaves, in a sealed segment and the last.
        for segment in [segments[0], segments[segments.count - 1]] {
            try Self.append([UInt8](repeating: 0, count: (1 << 20) + 17), to: segment)
        }
        let reopened = try await Store.open(at: path, options: Self.options())
        #expect(reopened.warnings.isEmpty, "\(reopened.warnings)")
        #expect(reopened.current == value)
        #expect(try segments.map(Self.size) == sizes, "open cuts the zeros")
        try await reopened.transact { try $0.insert(["n": 40], id: 40, into: "t") }
        let after = reopened.current
        try await reopened.close()

        // Zeros, then the start of a frame that never finished.
        let last = logSegments(path).last!
        let end = try Self.size(last)
        try Self.append([UInt8](repeating: 0, count: 5_000) + [0x10, 0, 0, 0, 1, 2, 3], to: last)
        let torn = try await Store.open(at: path, options: Self.options())
        let name = URL(fileURLWithPath: last).lastPathComponent
        #expect(torn.warnings == [.tornTail(segment: name, offset: end, bytes: 5_007)])
        #expect(torn.current == after)
        try await torn.close()
        #expect(try Self.size(last) == end)
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
