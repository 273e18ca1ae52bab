import Foundation
import Strata
import Testing

/// Every file a store reads starts with one header layout: "STRAT" and a
/// three-letter kind, a version, and a checksum of the header checked
/// before the version is believed. These tests swap, re-version and rename
/// files from outside, as a user's tools or another build would.
@Suite("Store file formats")
struct StoreFileFormatTests {
    /// Writes `bytes` with the header checksum (at `checksumOffset`) recomputed,
    /// as a newer or foreign writer of a sound file would have.
    static func resealed(_ bytes: [UInt8], checksumOffset: Int) -> [UInt8] {
        var bytes = bytes
        let checksum = CRC32C.checksum(bytes[0..<checksumOffset])
        for i in 0..<4 { bytes[checksumOffset + i] = UInt8(truncatingIfNeeded: checksum >> (8 * i)) }
        return bytes
    }

    static func read(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func write(_ bytes: [UInt8], _ path: String) throws { try Data(bytes).write(to: URL(fileURLWithPath: path)) }

    @Test("a sound header of another kind is not taken for a snapshot, a manifest or a log segment")
    func kindsAreChecked() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        _ = try await StoreCorruptionTests.makeStore(path, count: 12, snapshotAt: 8)
        let snapshot = snapshotFiles(path).last!

        // A snapshot whose magic says "log", its checksum sound: skipped for the log.
        let asLog = StoreCorruptionTests.copyStore(path)
        defer { removeStore(asLog) }
        let moved = asLog + "/snapshots/" + URL(fileURLWithPath: snapshot).lastPathComponent
        var bytes = try Self.read(moved)
        bytes.replaceSubrange(5..<8, with: Array("LOG".utf8))
        try Self.write(Self.resealed(bytes, checksumOffset: 60), moved)
        let store = try await Store.open(at: asLog, options: testOptions())
        #expect(store.current.basis == 12)
        let skipped = store.warnings.contains {
            if case .skippedSnapshot(_, let reason) = $0 { return reason.contains("bad magic") }
            return false
        }
        #expect(skipped, "\(store.warnings)")
        try await store.close()

        // A manifest whose magic says "snapshot": refused under .strict, rebuilt otherwise.
        let asSnapshot = StoreCorruptionTests.copyStore(path)
        defer { removeStore(asSnapshot) }
        var manifest = try Self.read(asSnapshot + "/manifest")
        manifest.replaceSubrange(5..<8, with: Array("SNP".utf8))
        try Self.write(Self.resealed(manifest, checksumOffset: 56), asSnapshot + "/manifest")
        await #expect {
            _ = try await Store.open(at: asSnapshot, options: testOptions())
        } throws: { error in
            guard case .corruptManifest(_, let reason)? = error as? StoreError else { return false }
            return reason.contains("bad magic")
        }
        var recovering = testOptions()
        recovering.recovery = .truncateAtDamage
        let rebuilt = try await Store.open(at: asSnapshot, options: recovering)
        #expect(rebuilt.current.basis == 12)
        #expect(rebuilt.warnings.contains { if case .rebuiltManifest = $0 { return true } else { return false } })
        try await rebuilt.close()

        // A log segment whose magic says "block": damage at offset 0.
        let asBlock = StoreCorruptionTests.copyStore(path)
        defer { removeStore(asBlock) }
        let segment = logSegments(asBlock).first!
        var log = try Self.read(segment)
        log.replaceSubrange(5..<8, with: Array("BLK".utf8))
        try Self.write(Self.resealed(log, checksumOffset: 20), segment)
        await #expect {
            _ = try await Store.open(at: asBlock, options: testOptions())
        } throws: { error in
            guard case .corruptLog(_, let offset, let reason)? = error as? StoreError else { return false }
            return offset == 0 && reason.contains("bad magic")
        }
    }

    @Test("a manifest, snapshot or log segment from a newer format is refused as such, naming the file by its path")
    func newerVersions() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        _ = try await StoreCorruptionTests.makeStore(path, count: 5, snapshotAt: 5)
        var recovering = testOptions()
        recovering.recovery = .truncateAtDamage
        // The file in a copy of the store, where its header keeps its
        // checksum, the version written there and the newest this build reads.
        let files: [(file: (String) -> String, checksumOffset: Int, found: UInt8, supported: UInt32)] = [
            ({ $0 + "/manifest" }, 56, 9, 1),
            ({ snapshotFiles($0).last! }, 60, 4, 3),
            ({ logSegments($0).last! }, 20, 9, 1),
        ]
        for newer in files {
            let copy = StoreCorruptionTests.copyStore(path)
            defer { removeStore(copy) }
            let file = newer.file(copy)
            var bytes = try Self.read(file)
            bytes[8] = newer.found
            try Self.write(Self.resealed(bytes, checksumOffset: newer.checksumOffset), file)
            // Not damage: even .truncateAtDamage must not rebuild over a newer build's file.
            for options in [testOptions(), recovering] {
                await #expect {
                    _ = try await Store.open(at: copy, options: options)
                } throws: { error in
                    guard case .unsupportedVersion(let named, let found, let supported)? = error as? StoreError else {
                        return false
                    }
                    return named == file && found == UInt32(newer.found) && supported == newer.supported
                }
            }
        }
    }

    @Test("files whose names only resemble the store's are never read; stray snapshots are left alone")
    func strayNames() async throws {
        let path = temporaryStorePath()
        defer { removeStore(path) }
        let values = try await StoreCorruptionTests.makeStore(path, count: 6, snapshotAt: 4)
        let strays = [
            "/snapshots/snapshot-5.strata",
            "/snapshots/snapshot-0000000000000000000x.strata",
            "/snapshots/snapshot--0000000000000000005.strata",
            "/blocks/block-L1-5.strata",
            "/blocks/block-Lx-00000000000000000000.strata",
        ]
        for stray in strays { try Self.write(Array("not a Strata file".utf8), path + stray) }
        let store = try await Store.open(at: path, options: testOptions())
        #expect(store.current == values[6])
        #expect(store.warnings.isEmpty, "\(store.warnings)")
        #expect(try await store.database(asOf: 3) == values[3])
        try await store.close()
        // blocks/ is the store's cache, cleared of what it does not know; snapshots/ is left alone.
        for stray in strays where stray.hasPrefix("/snapshots") {
            #expect(FileManager.default.fileExists(atPath: path + stray))
        }
    }
}
