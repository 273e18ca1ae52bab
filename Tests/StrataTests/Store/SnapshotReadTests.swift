import Foundation
import Strata
import Testing

/// Opening a store reads a version 3 snapshot chunk by chunk, on the
/// decoding workers: a read that fails partway through (a failing disk) is
/// reported as the file system's error, one that comes back short (a file
/// cut after its size was read) as damage named where it is; either way an
/// open skips the snapshot with a warning and opens from its log with the
/// same value.
@Suite("Snapshot reads")
struct SnapshotReadTests {
    @Test(
        "a snapshot whose reads fail or come back short in its header, directory or any chunk is skipped, the log serves; reading it says why"
    )
    func faultyReads() async throws {
        let path = temporaryStorePath("snapshot-reads")
        defer { removeStore(path) }
        let faulty = FaultyFileSystem()
        var options = testOptions()
        options.fileSystem = faulty
        let (current, file, _, layout) = try await SnapshotChunkTests.snapshottedLarge(
            at: path,
            seed: 23,
            options: options
        )
        let name = URL(fileURLWithPath: file).lastPathComponent

        let middle = layout.chunks[layout.chunks.count / 2]
        // Where a read goes wrong, and what a short read there is called.
        let places: [(label: String, offset: Int, short: String)] = [
            ("header", 10, "bytes, shorter than the"),
            ("directory", layout.directoryRange.lowerBound + 3, "of the directory's"),
            ("first chunk", layout.chunks[0].range.lowerBound + 10, "chunk 0 "),
            ("middle chunk", middle.range.lowerBound + middle.range.count / 2, "chunk \(layout.chunks.count / 2) "),
            ("last chunk", layout.chunks.last!.range.upperBound - 1, "chunk \(layout.chunks.count - 1) "),
        ]
        for place in places {
            for short in [false, true] {
                let label = "\(place.label), \(short ? "short read" : "EIO")"
                // A failing disk is said as the file system says it; a short
                // read (the file cut) is damage, named where it is.
                let expected = short ? place.short : "Input/output error"
                func faults(_ on: Bool) {
                    faulty.faults.withLock {
                        $0.readFaultsOfPathsEnding = on ? name : nil
                        $0.readFaultOffset = place.offset
                        $0.shortReads = short
                    }
                }
                faults(true)
                let reopened = try await Store.open(at: path, options: options)
                let reasons = reopened.warnings.compactMap { warning -> String? in
                    if case .skippedSnapshot(let file, let reason) = warning, file == name { return reason }
                    return nil
                }
                #expect(reasons.count == 1, "\(label): \(reopened.warnings)")
                #expect(reasons.allSatisfy { $0.contains(expected) }, "\(label): \(reasons)")
                #expect(await reopened.current == current, "\(label)")
                try await reopened.close()

                // Reading the snapshot of an open store, or verifying it:
                // the same error.
                faults(false)
                let open = try await Store.open(at: path, options: options)
                #expect(open.warnings.isEmpty, "\(label): \(open.warnings)")
                faults(true)
                for (what, read) in [
                    ("database(inSnapshot:)", { _ = try await open.database(inSnapshot: 1) }),
                    ("verify()", { try await open.verify() }),
                ] as [(String, () async throws -> Void)] {
                    do {
                        try await read()
                        Issue.record("\(label), \(what): the snapshot read without error")
                    } catch let error as StoreError {
                        if case .corruptSnapshot(_, let reason) = error, short {
                            #expect(reason.contains(expected), "\(label), \(what): \(reason)")
                        } else {
                            Issue.record("\(label), \(what): \(error)")
                        }
                    } catch let error as FileSystemError {
                        #expect(
                            !short && error.code == EIO && error.path.hasSuffix(name),
                            "\(label), \(what): \(error)"
                        )
                    }
                }
                try await open.close()
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
