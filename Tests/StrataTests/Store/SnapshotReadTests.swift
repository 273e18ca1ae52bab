import Foundation
import Strata
import Testing

/// Opening a store reads a version 3 snapshot chunk by chunk, on the
/// decoding workers: a read that fails or comes back short partway through
/// (a failing disk, a file cut after its size was read) refuses the
/// snapshot with a warning that names where, and the store opens from its
/// log with the same value.
@Suite("Snapshot reads")
struct SnapshotReadTests {
    @Test("a snapshot whose reads fail or come back short in its directory or any chunk is skipped; the log serves")
    func faultyReads() async throws {
        let path = temporaryStorePath("snapshot-reads")
        defer { removeStore(path) }
        let database = try SnapshotChunkTests.largeDatabase(seed: 23)
        let faulty = FaultyFileSystem()
        var options = testOptions()
        options.fileSystem = faulty
        let store = try await Store.open(at: path, options: options)
        try await store.transact(message: "import") { builder in
            for (name, table) in database.tables {
                for (id, record) in table.records { try builder.insert(record, id: id, into: name) }
            }
        }
        try await store.snapshot()
        let current = store.current
        try await store.close()
        let (file, _, layout) = try SnapshotLayout.newest(in: path)
        #expect(layout.chunks.count >= 4)
        let name = URL(fileURLWithPath: file).lastPathComponent

        let middle = layout.chunks[layout.chunks.count / 2]
        let places: [(label: String, offset: Int, names: String)] = [
            ("directory", layout.directoryRange.lowerBound + 3, "directory"),
            ("first chunk", layout.chunks[0].range.lowerBound + 10, "chunk 0"),
            ("middle chunk", middle.range.lowerBound + middle.range.count / 2, "chunk \(layout.chunks.count / 2)"),
            ("last chunk", layout.chunks.last!.range.upperBound - 1, "chunk \(layout.chunks.count - 1)"),
        ]
        for place in places {
            for short in [false, true] {
                let label = "\(place.label), \(short ? "short read" : "EIO")"
                faulty.faults.withLock {
                    $0.readFaultsOfPathsEnding = name
                    $0.readFaultOffset = place.offset
                    $0.shortReads = short
                }
                let reopened = try await Store.open(at: path, options: options)
                let reasons = reopened.warnings.compactMap { warning -> String? in
                    if case .skippedSnapshot(let file, let reason) = warning, file == name { return reason }
                    return nil
                }
                #expect(reasons.count == 1, "\(label): \(reopened.warnings)")
                #expect(reasons.allSatisfy { $0.contains(place.names) }, "\(label): \(reasons)")
                #expect(await reopened.current == current, "\(label)")
                try await reopened.close()
            }
        }

        // Reads sound again: the snapshot serves, nothing skipped.
        faulty.faults.withLock { $0.readFaultsOfPathsEnding = nil }
        let reopened = try await Store.open(at: path, options: options)
        #expect(reopened.warnings.isEmpty, "\(reopened.warnings)")
        #expect(await reopened.current == current)
        try await reopened.close()
    }
}
