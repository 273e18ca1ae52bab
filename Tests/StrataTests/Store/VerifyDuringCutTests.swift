import Foundation
import Strata
import Synchronization
import Testing

/// `verify(at:)` beside a writer that cuts its history (a truncate) while
/// the check reads the files: the manifest read before the cut and the log
/// read after it disagree, which is no damage. The check runs again when
/// the store's files changed under it.
@Suite("Store: verify(at:) while a writer cuts the history")
struct VerifyDuringCutTests {
    /// Serves the manifest as it was before the cut (a copy at `stale`) to
    /// the first `staleReads` opens of it, the real files to every other.
    final class StaleManifestFileSystem: ForwardingFileSystem, @unchecked Sendable {
        let base = PosixFileSystem()
        let manifest: String
        let stale: String
        let staleReads: Int
        let reads = Mutex(0)

        init(manifest: String, stale: String, staleReads: Int) {
            self.manifest = manifest
            self.stale = stale
            self.staleReads = staleReads
        }

        func openForReading(_ path: String) throws -> any StorageFile {
            guard path == manifest else { return try base.openForReading(path) }
            let read = reads.withLock {
                $0 += 1
                return $0
            }
            return try base.openForReading(read <= staleReads ? stale : path)
        }
    }

    @Test("a manifest read before a truncate and a log read after it: checked again, sound; damage stays damage")
    func manifestBeforeCut() async throws {
        let path = temporaryStorePath("verify-cut")
        let stale = path + ".manifest-before-cut"
        defer {
            removeStore(path)
            unlink(stale)
        }
        let store = try await StoreReadOnlyTests.writer(path, commits: 40)
        try await store.close()
        let manifest = path + "/manifest"
        try FileManager.default.copyItem(atPath: manifest, toPath: stale)
        let writer = try await Store.open(at: path, options: testOptions())
        try await writer.truncate(after: 10)
        try await writer.close()
        #expect(try Store.verify(at: path).isSound)

        // The check's first reading sees the manifest from before the cut
        // (as a check started just before the truncate would).
        let once = StaleManifestFileSystem(manifest: manifest, stale: stale, staleReads: 2)
        let report = try Store.verify(at: path, fileSystem: once)
        #expect(report.isSound, "\(report.problems)")
        #expect(report.transactions == 10)
        #expect(once.reads.withLock { $0 } > 2, "checked again")
        #expect(report.notes.isEmpty || !report.notes.contains { $0.contains("changed during") })

        // Files that disagree and do not change: damage, reported after one check.
        let always = StaleManifestFileSystem(manifest: manifest, stale: stale, staleReads: .max)
        let damaged = try Store.verify(at: path, fileSystem: always)
        #expect(!damaged.isSound)
        #expect(damaged.problems.contains { $0.file.hasSuffix("manifest") }, "\(damaged.problems)")
        #expect(always.reads.withLock { $0 } <= 3, "one check, the layout read before and after it")
    }
}
