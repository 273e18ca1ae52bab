import DeterministicRandom
import Foundation
import Strata
import Testing

/// `Store.verify(at:)` (and `strata verify`) compares each snapshot with the log replayed to its
/// basis by sums of record digests, and each run of index entries with the
/// replay's entries at the same offsets: these tests make snapshots that
/// are well formed (every checksum agrees) but unlike their log, in each
/// way the comparison can tell.
@Suite("Verify against snapshots")
struct VerifySnapshotTests {
    /// The snapshot `file` with `from` replaced by `to` (same length) in
    /// chunk `chunk`'s first place holding it, resealed, then verified.
    static func verified(
        _ path: String,
        _ file: String,
        _ bytes: [UInt8],
        _ layout: SnapshotLayout,
        chunk: Int,
        replacing from: String,
        with to: String
    ) throws -> VerificationReport {
        var raw = try layout.raw(of: chunk, in: bytes)
        let found = try #require(raw.firstRange(of: Array(from.utf8)))
        raw.replaceSubrange(found, with: Array(to.utf8))
        try Data(try layout.resealing(bytes, chunk: chunk, raw: raw)).write(to: URL(fileURLWithPath: file))
        return try Store.verify(at: path)
    }

    @Test("a snapshot record unlike the log's, one ID twice, and index entries unlike the records' are each named")
    func namesEachDifference() async throws {
        let path = temporaryStorePath("verify-snapshot-compare")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "import") { builder in
            try builder.createIndex("byTitle", on: "songs", fields: ["title"])
            // k1 and k2 alike: a snapshot listing k1 twice has the same records.
            try builder.insert(["title": "Alpha"], id: "k1", into: "songs")
            try builder.insert(["title": "Alpha"], id: "k2", into: "songs")
            try builder.insert(["title": "Gamma"], id: "k3", into: "songs")
        }
        try await store.snapshot()
        try await store.close()
        #expect(try Store.verify(at: path).isSound)

        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        let records = try #require(layout.chunks.firstIndex { $0.fields[0] == 0 })
        let entries = try #require(layout.chunks.firstIndex { $0.fields[0] == 1 })
        func reasons(_ report: VerificationReport) -> [String] { report.problems.map(\.reason) }
        let prefix = "differs from the log replayed to t 1: "

        let changed = try Self.verified(path, file, bytes, layout, chunk: records, replacing: "Gamma", with: "Gammb")
        #expect(reasons(changed) == [prefix + #"record "k3" of songs differs (1 records do)"#])
        #expect(changed.problems.first?.file == file)

        // As a fresh process reads it (the snapshot's names numbered as its file does).
        let command = try await StrataRunner.run(["verify", path])
        #expect(command.status == 1, "\(command)")
        #expect(command.output.contains(#"record "k3" of songs differs (1 records do)"#), "\(command)")

        let repeated = try Self.verified(path, file, bytes, layout, chunk: records, replacing: "k2", with: "k1")
        #expect(reasons(repeated) == [prefix + #"record "k1" of songs appears twice"#])

        // Two records' values swapped: the same bytes under other IDs.
        var raw = try layout.raw(of: records, in: bytes)
        let alpha = Array("Alpha".utf8)
        let gamma = Array("Gamma".utf8)
        func first(_ needle: [UInt8]) throws -> Int {
            try #require(raw.firstRange(of: needle)).lowerBound
        }
        let (a, g) = (try first(alpha), try first(gamma))
        raw.replaceSubrange(a..<(a + 5), with: gamma)
        raw.replaceSubrange(g..<(g + 5), with: alpha)
        try Data(try layout.resealing(bytes, chunk: records, raw: raw)).write(to: URL(fileURLWithPath: file))
        let swapped = try Store.verify(at: path).problems.map(\.reason)
        #expect(swapped.count == 1 && swapped[0].hasSuffix("of songs differs (2 records do)"), "\(swapped)")

        // Still in order, so the file reads; only a comparison finds it.
        let lying = try Self.verified(path, file, bytes, layout, chunk: entries, replacing: "Gamma", with: "Gammb")
        #expect(reasons(lying) == [prefix + "the entries of index byTitle of songs differ"])

        try Data(bytes).write(to: URL(fileURLWithPath: file))
        #expect(try Store.verify(at: path).isSound)
    }

    @Test("records and index entries over several chunks compare chunk by chunk; a lie in a later chunk is found")
    func severalChunks() async throws {
        let path = temporaryStorePath("verify-snapshot-chunks")
        defer { removeStore(path) }
        var random = SplitMix64(seed: 41)
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        let store = try await Store.open(at: path, options: testOptions())
        // ~1.5 MB of titles: two or more chunks of records and of entries.
        try await store.transact(message: "import") { builder in
            try builder.createIndex("byTitle", on: "notes", fields: ["title"])
            for n in 0..<1_500 {
                let title = String((0..<1_000).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
                try builder.insert(
                    ["title": .string(title), "n": .int(Int64(n))],
                    id: RecordID(Int64(n)),
                    into: "notes"
                )
            }
        }
        // A later snapshot over edits, deletes and inserts made after the first.
        try await store.snapshot()
        try await store.transact(message: "edits") { builder in
            for n in stride(from: 0, to: 1_500, by: 7) { try builder.delete(RecordID(Int64(n)), from: "notes") }
            for n in stride(from: 3, to: 1_500, by: 11) where n % 7 != 0 {
                try builder.update(RecordID(Int64(n)), in: "notes", [.set("n", .int(-1))])
            }
            try builder.insert(["title": "zz last"], id: 5_000, into: "notes")
        }
        try await store.snapshot()
        try await store.close()
        let sound = try Store.verify(at: path)
        #expect(sound.isSound, "\(sound.problems)")
        #expect(sound.snapshots == 2)

        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        let recordChunks = layout.chunks.indices.filter { layout.chunks[$0].fields[0] == 0 }
        let entryChunks = layout.chunks.indices.filter { layout.chunks[$0].fields[0] == 1 }
        try #require(recordChunks.count >= 2 && entryChunks.count >= 2, "\(recordChunks.count), \(entryChunks.count)")

        // One letter deep inside an entry of the last entries chunk: the
        // order holds (titles part within their first letters).
        let last = try #require(entryChunks.last)
        var decoded = SnapshotChunkTests.frontDecoded(try layout.raw(of: last, in: bytes))
        let k = decoded.count / 2
        decoded[k][500] = decoded[k][500] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        let lying = try layout.resealing(bytes, chunk: last, raw: SnapshotChunkTests.frontCoded(decoded))
        try Data(lying).write(to: URL(fileURLWithPath: file))
        let report = try Store.verify(at: path)
        #expect(report.problems.map(\.reason).contains { $0.hasSuffix("the entries of index byTitle of notes differ") })

        // A record of the last records chunk, one letter of its title.
        var raw = try layout.raw(of: try #require(recordChunks.last), in: bytes)
        var at = raw.count / 2
        while !(UInt8(ascii: "a")...UInt8(ascii: "z")).contains(raw[at]) { at += 1 }
        raw[at] = raw[at] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
        try Data(try layout.resealing(bytes, chunk: recordChunks.last!, raw: raw)).write(to: URL(fileURLWithPath: file))
        let changed = try Store.verify(at: path)
        #expect(changed.problems.map(\.reason).contains { $0.contains("of notes differs (1 records do)") })
    }

    /// Record digests hash 16-byte blocks and a zero-padded tail: a change
    /// in any byte of a record, whatever its size and the byte's place in
    /// the last block, must change its table's sum.
    @Test("a one-letter change anywhere in records of every size around the digest's 16-byte blocks is found")
    func everyPlaceOfEverySize() async throws {
        let path = temporaryStorePath("verify-snapshot-sizes")
        defer { removeStore(path) }
        // Sixteen lengths in a row: records whose length leaves every remainder of 16.
        let lengths = Array(1...16) + [17, 31, 32, 33, 100, 1_000, 5_000]
        let letters = Array("abcdefghijklmnopqrstuvwxyz")
        // Each title one letter repeated, a letter per length: each is the only place its text occurs.
        let titles = lengths.enumerated().map { String(repeating: letters[$0.offset], count: $0.element) }
        let uuid = UUID()
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "import") { builder in
            try builder.insert(["title": "OMEGAS"], id: RecordID("cl\u{E9}-\u{1F600}"), into: "notes")
            try builder.insert(["title": "OMEGAU"], id: RecordID(uuid), into: "notes")
            for (n, title) in titles.enumerated() {
                try builder.insert(
                    ["title": .string(title), "n": .int(Int64(n))],
                    id: RecordID(Int64(n)),
                    into: "notes"
                )
            }
        }
        try await store.snapshot()
        try await store.close()
        #expect(try Store.verify(at: path).isSound)

        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        let records = try #require(layout.chunks.firstIndex { $0.fields[0] == 0 })
        for (n, title) in titles.enumerated() {
            let count = title.utf8.count
            let places = count <= 49 ? Array(0..<count) : [0, 1, count / 2, count - 2, count - 1]
            for place in places {
                var changed = Array(title)
                changed[place] = "Z"
                let report = try Self.verified(
                    path,
                    file,
                    bytes,
                    layout,
                    chunk: records,
                    replacing: title,
                    with: String(changed)
                )
                let reasons = report.problems.map(\.reason)
                #expect(
                    reasons == ["differs from the log replayed to t 1: record \(n) of notes differs (1 records do)"],
                    "length \(count), letter \(place): \(reasons)"
                )
            }
        }
        // Records under string (non-ASCII) and UUID IDs, whose digests hash the ID's bytes.
        for (title, id) in [("OMEGAS", RecordID("cl\u{E9}-\u{1F600}")), ("OMEGAU", RecordID(uuid))] {
            let report = try Self.verified(path, file, bytes, layout, chunk: records, replacing: title, with: "OMEGAX")
            let reasons = report.problems.map(\.reason)
            #expect(reasons.count == 1 && reasons[0].hasSuffix("of notes differs (1 records do)"), "\(id): \(reasons)")
        }
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        #expect(try Store.verify(at: path).isSound)
    }

    /// What a snapshot's comparison finds comes in the report where the
    /// check reached the snapshot, before the damage the log shows after
    /// its basis; and it is found against the value at the basis, not
    /// after the transactions that follow (every record changes after it).
    @Test("a snapshot's difference is reported before later log damage, against the value at its basis")
    func findingsInPlace() async throws {
        let path = temporaryStorePath("verify-snapshot-order")
        defer { removeStore(path) }
        // A segment per transaction: the log damage is found when the
        // second segment is read, after the first one's replay reached the snapshot.
        var options = testOptions()
        options.segmentSize = 1_024
        let store = try await Store.open(at: path, options: options)
        try await store.transact(message: "first") { builder in
            for n in 0..<200 {
                try builder.insert(["title": .string("song \(n)")], id: RecordID(Int64(n)), into: "songs")
            }
            try builder.insert(["title": "Gamma"], id: "g", into: "songs")
        }
        try await store.snapshot()
        // Every record changes after the basis, the one the snapshot is made to lie about first.
        try await store.transact(message: "second") { builder in
            try builder.update("g", in: "songs", [.set("title", .string("MARKER-TWO"))])
            for n in 0..<200 { try builder.update(RecordID(Int64(n)), in: "songs", [.set("n", .int(Int64(n)))]) }
        }
        try await store.transact(message: "third") { builder in
            try builder.insert(["title": "Delta"], id: "d", into: "songs")
        }
        try await store.close()
        let sound = try Store.verify(at: path)
        #expect(sound.isSound, "\(sound.problems)")

        // Only the comparison with the value at t 1 tells this snapshot from the log.
        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        let records = try #require(layout.chunks.firstIndex { $0.fields[0] == 0 })
        let lying = try Self.verified(path, file, bytes, layout, chunk: records, replacing: "Gamma", with: "Gammb")
        #expect(
            lying.problems.map(\.reason) == [
                #"differs from the log replayed to t 1: record "g" of songs differs (1 records do)"#
            ]
        )

        // Then the second transaction damaged in the log, after the snapshot's basis.
        let logDirectory = path + "/log"
        let segments = try FileManager.default.contentsOfDirectory(atPath: logDirectory).sorted().filter {
            $0.hasSuffix(".log")
        }
        #expect(segments.count == 3, "\(segments)")
        let marker = Array("MARKER-TWO".utf8)
        let segment = try #require(
            try segments.first {
                [UInt8](try Data(contentsOf: URL(fileURLWithPath: logDirectory + "/" + $0))).firstRange(of: marker)
                    != nil
            }
        )
        #expect(segment != segments.first)
        var log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: logDirectory + "/" + segment)))
        let at = try #require(log.firstRange(of: marker)).lowerBound
        log[at] ^= 0x20
        try Data(log).write(to: URL(fileURLWithPath: logDirectory + "/" + segment))
        let both = try Store.verify(at: path)
        #expect(both.problems.count == 2, "\(both.problems)")
        #expect(both.problems.first?.file == file, "\(both.problems)")
        #expect(both.problems.last?.file == logDirectory + "/" + segment, "\(both.problems)")
    }

    /// Damage in a segment ends the replay there, but the records before it
    /// are replayed: a snapshot of one of them is compared, in the same
    /// segment as the damage.
    @Test("a snapshot whose basis lies before damage in its own segment is still compared with the log")
    func snapshotBeforeDamageInItsSegment() async throws {
        let path = temporaryStorePath("verify-snapshot-damage")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "first") { builder in
            try builder.insert(["title": "Gamma"], id: "g", into: "songs")
        }
        try await store.snapshot()
        try await store.transact(message: "second") { builder in
            try builder.insert(["title": "MARKER-TWO"], id: "m", into: "songs")
        }
        try await store.transact(message: "third") { builder in
            try builder.insert(["title": "Delta"], id: "d", into: "songs")
        }
        try await store.close()
        let logDirectory = path + "/log"
        let segments = try FileManager.default.contentsOfDirectory(atPath: logDirectory).filter { $0.hasSuffix(".log") }
        try #require(segments.count == 1, "\(segments)")
        let segment = logDirectory + "/" + segments[0]
        var log = [UInt8](try Data(contentsOf: URL(fileURLWithPath: segment)))
        let at = try #require(log.firstRange(of: Array("MARKER-TWO".utf8))).lowerBound
        log[at] ^= 0x20
        try Data(log).write(to: URL(fileURLWithPath: segment))

        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        let records = try #require(layout.chunks.firstIndex { $0.fields[0] == 0 })
        let report = try Self.verified(path, file, bytes, layout, chunk: records, replacing: "Gamma", with: "Gammb")
        #expect(report.problems.first?.file == segment, "\(report.problems)")
        #expect(
            report.problems.contains {
                $0.file == file
                    && $0.reason == #"differs from the log replayed to t 1: record "g" of songs differs (1 records do)"#
            },
            "\(report.problems)"
        )
        #expect(report.transactions == 1)
    }
}
