import DeterministicRandom
import Foundation
import Strata
import Testing

/// Snapshot version 3 (chunks behind a directory, records in packed form,
/// decoded on every core): round trips at the sizes apps have, the version
/// 2 files of earlier builds still read and replaced, damage anywhere
/// refusing the whole snapshot, and hostile chunks whose checksums are
/// sound never crashing the decoder.
@Suite("Snapshot chunks")
struct SnapshotChunkTests {
    // MARK: Version 2, as an earlier build wrote it

    /// A store written by the build before version 3: at t 1 three records
    /// in two tables and an index (snapshot at t 1, version 2), at t 2 one
    /// more record (log only).
    static let version2Store: [(path: String, base64: String)] = [
        ("manifest", "U1RSQVRNQU4BAAAAAAAAAAIAAAAAAAAAAQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAABRgbj7"),
        (
            "log/00000000000000000001.log",
            "U1RSQVRMT0cBAAAAAQAAAAAAAABqlkwt6QAAAN7kj6RTVFJUA9IXZy7X+knvu8B/kYRiWPkCAKpbQMNOWshBBXNvbmdzAQACB2Fy"
                + "dGlzdHMBAA4AAgAEbWV0YQoCBGJvcm4D5B4EY2l0eQUFUGFyaXMABG5hbWUFB1NvbWVvbmUFc29uZ3MCAAIAAwAFYWxidW0DAgAE"
                + "dGFncwkCBQFhBQFiAAV0aXRsZQUFQWxwaGEBA3R3bwADAwMEAAZhcnRpc3QIAAdhcnRpc3RzAA4FBRTOqW1lZ2Eg4oCUIMO8bsOv"
                + "Y29kZQAAAQVzb25ncwEHYnlUaXRsZQIHYnlUaXRsZQABBXRpdGxlAEMAAACEEw1NU1RSVAPZl8VbBshFwKtMSUN2K08MBAJMl0HD"
                + "TlrIQQRtb3JlAQABBXNvbmdzAQAGAAEABXRpdGxlBQVHYW1tYQAAAA=="
        ),
        (
            "snapshots/snapshot-00000000000000000001.strata",
            "U1RSQVRTTlACAAAAAAAAAAEAAAAAAAAAAwAAAAAAAAC9AAAAAAAAANIXZy7X+knvu8B/kYRiWPkOFaVAY6Cr6yi1L/0k3IUFAKKK"
                + "JiqAOekmFC1CjWdM6LF24Zd54t7PbIKLbAtqEH4zYznXqYx1QNsIkVtKmQJ3k34MIAr8wXjB8RFKYpAXGByD3SXhMm4yXsONnqqa"
                + "VwpOElFpEhXHgwOFgxvFICYCVjm9et/4F8uRsobk8F7dpBXzNc29vWpOMQdhVjFu6G89jLBL6SVBBBXaHpdQAnArhp6N4+u3+mEm"
                + "Uw8SIpAGAFN47dO0gREBr/ZsQdolDSEKrLM7aQ=="
        ),
    ]

    /// The value the fixture holds at t 1.
    static func version2Value() throws -> Database {
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byTitle", on: "songs", fields: ["title"])
        try builder.insert(["title": "Alpha", "album": 1, "tags": .list(["a", "b"])], id: 1, into: "songs")
        try builder.insert(
            [
                "title": "Ωmega — ünïcode", "album": 2,
                "artist": .reference(RecordReference(table: "artists", id: 7)),
            ],
            id: "two",
            into: "songs"
        )
        try builder.insert(["name": "Someone", "meta": .map(["born": 1970, "city": "Paris"])], id: 7, into: "artists")
        return builder.database
    }

    static func write(_ files: [(path: String, base64: String)], to directory: String) throws {
        for (path, base64) in files {
            let url = URL(fileURLWithPath: directory + "/" + path)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data(base64Encoded: base64)!.write(to: url)
        }
    }

    /// Whether open refused a snapshot (and fell back to an older one or the log).
    static func skippedSnapshot(_ warnings: [StoreWarning]) -> Bool {
        warnings.contains {
            if case .skippedSnapshot = $0 { return true }
            return false
        }
    }

    static func formatVersion(of file: String) throws -> UInt32 {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        return UInt32(bytes[8]) | UInt32(bytes[9]) << 8 | UInt32(bytes[10]) << 16 | UInt32(bytes[11]) << 24
    }

    @Test("a version 2 snapshot of an earlier build is read, and the next snapshot is version 3")
    func version2IsRead() async throws {
        let path = temporaryStorePath("snapshot-v2")
        defer { removeStore(path) }
        try Self.write(Self.version2Store, to: path)
        let expected = try Self.version2Value()

        let store = try await Store.open(at: path, options: testOptions())
        #expect(await store.warnings.isEmpty)
        let fromSnapshot = try await store.database(inSnapshot: 1)
        #expect(fromSnapshot.tables == expected.tables)
        fromSnapshot._invariantCheck()
        #expect(try fromSnapshot.query("songs").order(by: "title").ids() == [1, "two"])
        let current = store.current
        #expect(current.recordCount == 4)
        #expect(current[table: "songs"][3]?["title"] == "Gamma")

        let written = try await store.snapshot()
        try await store.close()
        #expect(try Self.formatVersion(of: path + "/snapshots/" + written.name) == 3)

        let reopened = try await Store.open(at: path, options: testOptions())
        defer { Task { try? await reopened.close() } }
        #expect(await reopened.warnings.isEmpty)
        #expect(await reopened.current == current)
        let newest = try await reopened.database(inSnapshot: 2)
        #expect(newest == current)
        newest._invariantCheck()
    }

    // MARK: Round trips

    /// A database that fills several chunks: 3,000 songs of ~1.3 KB
    /// (Unicode titles and names, lists, maps, references, NUL), a record
    /// over 1 MiB (a chunk of its own), string and UUID IDs, two indexes
    /// (one unique, one on a nested path), and a table with an index but
    /// no records.
    static func largeDatabase(seed: UInt64) throws -> Database {
        var random = SplitMix64(seed: seed)
        var builder = TransactionBuilder(on: Database())
        try builder.createIndex("byAlbum", on: "songs", fields: ["album", "track"])
        try builder.createIndex("byCode", on: "songs", fields: ["code"], unique: true)
        try builder.createIndex("byCity", on: "artists", fields: [FieldPath("meta", "city")])
        try builder.createIndex("byName", on: "empty", fields: ["name"])
        let words = ["Ωmega", "naïve", "東京", "🎵", "e\u{301}", "plain", "a\u{0}b", ""]
        for n in 0..<3_000 {
            let title = (0..<4).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
            try builder.insert(
                [
                    "title": .string(title),
                    "album": .int(Int64(random.next() % 200)),
                    "track": .int(Int64(n % 17)),
                    "code": .string("c\(n)"),
                    "lyrics": .string(String(repeating: "la ", count: 400)),
                    "tags": .list([.string(words[n % words.count]), .int(-Int64(n)), .null, .bool(true)]),
                    "meta": .map(["rating": .double(Double(n) / 7), "added": .date(Date(timeIntervalSince1970: 1e9))]),
                    "artist": .reference(RecordReference(table: "artists", id: RecordID(Int64(n % 50)))),
                    "ñame \(n % 3)": .bytes([0, 1, 2, UInt8(n % 256)]),
                ],
                id: n % 3 == 0 ? RecordID("song \(n) ü") : RecordID(Int64(n) - 1_500),
                into: "songs"
            )
        }
        for n in 0..<50 {
            try builder.insert(
                [
                    "name": .string("artist \(n) \(words[n % words.count])"),
                    "meta": .map(["city": .string("city \(n % 7)")]),
                ],
                id: RecordID(UUID(uuidString: String(format: "00000000-0000-0000-0000-%012d", n))!),
                into: "artists"
            )
        }
        try builder.insert(
            ["blob": .bytes((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }), "code": "big"],
            id: "large",
            into: "songs"
        )
        return builder.database
    }

    @Test("a database of several chunks, a record over a chunk's size and indexes round-trips through a snapshot")
    func roundTrip() async throws {
        let path = temporaryStorePath("snapshot-chunks")
        defer { removeStore(path) }
        let database = try Self.largeDatabase(seed: 7)
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "import") { builder in
            for (name, table) in database.tables {
                for index in table.indexes {
                    try builder.createIndex(
                        index.definition.name,
                        on: name,
                        fields: index.definition.fields,
                        unique: index.definition.isUnique
                    )
                }
                for (id, record) in table.records { try builder.insert(record, id: id, into: name) }
            }
        }
        let written = try await store.snapshot()
        let current = store.current
        try await store.close()
        #expect(written.size > 64)

        for cycle in 0..<3 {
            let reopened = try await Store.open(at: path, options: testOptions())
            #expect(await reopened.warnings.isEmpty, "cycle \(cycle)")
            let value = try await reopened.database(inSnapshot: 1)
            #expect(value == current)
            value._invariantCheck()
            for (name, table) in current.tables {
                for index in table.indexes {
                    let field = index.definition.fields[0]
                    let expected = try current.query(name).order(by: field).ids()
                    let found = try value.query(name).order(by: field).ids()
                    #expect(found == expected, "\(name).\(index.definition.name)")
                }
            }
            #expect(value[table: "empty"].indexes.map(\.definition.name) == ["byName"])
            // Each cycle writes the snapshot again from a value that was read.
            if cycle < 2 { try await reopened.snapshot() }
            try await reopened.close()
        }
    }

    // MARK: Damage

    @Test("damage in any part of a version 3 snapshot refuses the whole file; the store opens from the log")
    func damage() async throws {
        let path = temporaryStorePath("snapshot-damage")
        defer { removeStore(path) }
        let (current, file, original, layout) = try await Self.snapshottedLarge(at: path, seed: 11)

        // A byte in the directory, in the first chunk, in a middle one, in
        // the last; a cut in the middle of a chunk and at a chunk boundary.
        let middle = layout.chunks[layout.chunks.count / 2]
        var cases: [(String, [UInt8])] = []
        for (label, offset) in [
            ("directory", layout.directoryRange.lowerBound + 3), ("first chunk", layout.chunks[0].range.lowerBound + 9),
            ("middle chunk", middle.range.lowerBound + middle.range.count / 2),
            ("last chunk", layout.chunks.last!.range.upperBound - 2),
        ] {
            var bytes = original
            bytes[offset] ^= 0x40
            cases.append((label, bytes))
        }
        cases.append(("cut in a chunk", Array(original[..<(middle.range.lowerBound + 5)])))
        cases.append(("cut at a chunk boundary", Array(original[..<middle.range.lowerBound])))
        for (label, bytes) in cases {
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            let reopened = try await Store.open(at: path, options: testOptions())
            let warnings = reopened.warnings
            #expect(
                Self.skippedSnapshot(warnings),
                "\(label): \(warnings)"
            )
            #expect(await reopened.current == current, "\(label)")
            await #expect(throws: StoreError.self, "\(label)") { try await reopened.database(inSnapshot: 1) }
            try await reopened.close()
        }
    }

    @Test("hostile chunks resealed with sound checksums are refused or decode to a sound value, never crash")
    func hostileChunks() async throws {
        let path = temporaryStorePath("snapshot-hostile")
        defer { removeStore(path) }
        let (original, file, bytes, layout) = try await Self.snapshotted(at: path, records: 40) { n in
            [
                "title": .string("t\(n) ü"), "n": .int(Int64(n)),
                "tags": .list([.string("a"), .map(["k": .null])]),
                "ref": .reference(RecordReference(table: "songs", id: RecordID(Int64(n + 1)))),
            ]
        }
        let raw = try layout.raw(of: 0, in: bytes)

        var random = SplitMix64(seed: 2026)
        var accepted = 0
        for round in 0..<300 {
            let mutated = Self.mutated(raw, kind: round % 3, random: &random)
            try Data(try layout.resealing(bytes, chunk: 0, raw: mutated)).write(to: URL(fileURLWithPath: file))
            let reopened = try await Store.open(at: path, options: testOptions())
            let refused = Self.skippedSnapshot(reopened.warnings)
            if refused {
                // Opened from the log instead: the value it holds.
                #expect(await reopened.current == original, "round \(round)")
            } else {
                let value = try await reopened.database(inSnapshot: 1)
                value._invariantCheck()
                reopened.current._invariantCheck()
                accepted += 1
            }
            try await reopened.close()
        }
        // Mutations inside a string's bytes keep a sound record: some are accepted.
        #expect(accepted > 0 && accepted < 300)

        // Counts the chunk's bytes cannot hold, and an empty chunk, are refused
        // before anything is allocated for them.
        for count: UInt64 in [0, 41, UInt64(raw.count), UInt64(Int32.max)] {
            try Data(try layout.resealing(bytes, chunk: 0, raw: raw, count: count)).write(
                to: URL(fileURLWithPath: file)
            )
            let reopened = try await Store.open(at: path, options: testOptions())
            #expect(
                Self.skippedSnapshot(reopened.warnings),
                "count \(count)"
            )
            #expect(await reopened.current == original)
            try await reopened.close()
        }
    }
}

extension SnapshotChunkTests {
    @Test("verify finds a well-formed snapshot whose stored index entries are not its records' entries")
    func verifyFindsLyingIndexes() async throws {
        let path = temporaryStorePath("snapshot-verify")
        defer { removeStore(path) }
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "import") { builder in
            try builder.createIndex("byTitle", on: "songs", fields: ["title"])
            try builder.insert(["title": "Alpha"], id: 1, into: "songs")
            try builder.insert(["title": "Beta"], id: 2, into: "songs")
        }
        try await store.snapshot()
        try await store.verify()
        try await store.close()

        // The record's title changes from Alpha to Alphz; the stored entry
        // still says Alpha. Every checksum is made to agree.
        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        let number = layout.chunks.firstIndex { $0.fields[0] == 0 }!
        var raw = try layout.raw(of: number, in: bytes)
        let at = (0..<(raw.count - 4)).first { Array(raw[$0..<($0 + 5)]) == Array("Alpha".utf8) }!
        raw[at + 4] = UInt8(ascii: "z")
        try Data(try layout.resealing(bytes, chunk: number, raw: raw)).write(to: URL(fileURLWithPath: file))

        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.warnings.isEmpty)
        #expect(reopened.current[table: "songs"][1]?["title"] == "Alphz")
        await #expect {
            try await reopened.verify()
        } throws: { error in
            guard case .corruptSnapshot(let file, let reason)? = error as? StoreError else { return false }
            return file.hasSuffix(".strata") && reason.contains("byTitle")
        }
        try await reopened.close()
    }
}

extension SnapshotChunkTests {
    @Test(
        "an index whose entries fill several chunks round-trips; chunks swapped, or a unique value repeated at a seam or within a chunk, are refused"
    )
    func entryChunks() async throws {
        let path = temporaryStorePath("snapshot-entry-chunks")
        defer { removeStore(path) }
        var random = SplitMix64(seed: 23)
        let letters = Array("abcdefghijklmnopqrstuvwxyzé東🎵 ")
        let store = try await Store.open(at: path, options: testOptions())
        // ~1.7 MB of entries for each index: two or more chunks apiece.
        try await store.transact(message: "import") { builder in
            try builder.createIndex("byGroup", on: "notes", fields: ["group", "text"])
            try builder.createIndex("byText", on: "notes", fields: ["text"], unique: true)
            for n in 0..<1_500 {
                let text = String((0..<1_000).map { _ in letters[Int(random.next() % UInt64(letters.count))] })
                try builder.insert(
                    ["text": .string("\(text) \(n)"), "group": .int(Int64(n % 7))],
                    // Two-byte IDs: each entry ends with the same 3 ID bytes' layout.
                    id: RecordID(Int64(1_000 + n)),
                    into: "notes"
                )
            }
        }
        try await store.snapshot()
        let value = store.current
        try await store.close()

        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        for index in 0..<2 {
            let entryChunks = layout.chunks.filter { $0.fields[0] == 1 && $0.fields[2] == UInt64(index) }
            #expect(entryChunks.count >= 2, "index \(index): \(entryChunks.count) chunks")
            #expect(entryChunks.reduce(0) { $0 + $1.fields[3] } == 1_500)
        }
        let reopened = try await Store.open(at: path, options: testOptions())
        #expect(reopened.warnings.isEmpty)
        #expect(reopened.current == value)
        reopened.current._invariantCheck()
        let byText = try reopened.current.query("notes").order(by: "text").ids()
        #expect(byText == (try value.query("notes").filter { _ in true }.order(by: "text").ids()))
        try await reopened.close()

        // Each chunk alone is in order; swapped, the index is not.
        let textChunks = layout.chunks.indices.filter {
            layout.chunks[$0].fields[0] == 1 && layout.chunks[$0].fields[2] == 1
        }
        let (a, b) = (textChunks[0], textChunks[1])
        let rawA = try layout.raw(of: a, in: bytes)
        let rawB = try layout.raw(of: b, in: bytes)
        let swapped = try layout.resealing(
            bytes,
            chunks: [a: (rawB, layout.chunks[b].fields[3]), b: (rawA, layout.chunks[a].fields[3])]
        )
        try await Self.expectRefused(swapped, file: file, path: path, value: value, reason: "out of order")

        // The second chunk opens with the first one's last value under another
        // record's ID: in order, but a unique value twice, across the seam.
        let entriesA = Self.frontDecoded(rawA)
        var entriesB = Self.frontDecoded(rawB)
        let last = entriesA.last!
        let largestID = (entriesA + entriesB).map { Array($0.suffix(3)) }.max { $0.lexicographicallyPrecedes($1) }!
        #expect(largestID != Array(last.suffix(3)))
        entriesB[0] = Array(last.dropLast(3)) + largestID
        let repeated = try layout.resealing(bytes, chunks: [b: (Self.frontCoded(entriesB), nil)])
        try await Self.expectRefused(repeated, file: file, path: path, value: value, reason: "unique")

        // The same within one chunk: its second entry replaced by its first
        // entry's value under another record's ID.
        let first = entriesA[0]
        #expect(largestID != Array(first.suffix(3)))
        let twice = [first, Array(first.dropLast(3)) + largestID] + entriesA.dropFirst(2)
        let clash = try layout.resealing(bytes, chunks: [a: (Self.frontCoded(twice), nil)])
        try await Self.expectRefused(clash, file: file, path: path, value: value, reason: "same unique values")
    }

    /// Writes `bytes` as the snapshot `file`, opens the store and expects
    /// the snapshot refused (its warning naming `reason`) and the value
    /// read from the log instead.
    static func expectRefused(_ bytes: [UInt8], file: String, path: String, value: Database, reason: String?)
        async throws
    {
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let store = try await Store.open(at: path, options: testOptions())
        #expect(skippedSnapshot(store.warnings), "\(store.warnings)")
        if let reason { #expect("\(store.warnings)".contains(reason), "\(store.warnings)") }
        #expect(store.current == value)
        try await store.close()
    }

    /// The entries of a front-coded block (shared prefix length, suffix length, suffix).
    static func frontDecoded(_ raw: [UInt8]) -> [[UInt8]] {
        var offset = 0
        var entries: [[UInt8]] = []
        var previous: [UInt8] = []
        while offset < raw.count {
            let shared = Int(TestVarint.read(raw, at: &offset))
            let suffix = Int(TestVarint.read(raw, at: &offset))
            previous = Array(previous.prefix(shared)) + raw[offset..<(offset + suffix)]
            offset += suffix
            entries.append(previous)
        }
        return entries
    }

    /// `entries` front-coded as the writer does.
    static func frontCoded(_ entries: [[UInt8]]) -> [UInt8] {
        var raw: [UInt8] = []
        var previous: [UInt8] = []
        for entry in entries {
            let shared = zip(previous, entry).prefix { $0 == $1 }.count
            TestVarint.append(UInt64(shared), to: &raw)
            TestVarint.append(UInt64(entry.count - shared), to: &raw)
            raw += entry[shared...]
            previous = entry
        }
        return raw
    }
}

/// The parts of a version 3 snapshot file, read by the tests independently
/// of the store's reader: where the directory and each chunk are, and how
/// to write the file again with one chunk replaced (checksums recomputed).
struct SnapshotLayout {
    struct Chunk {
        var fields: [UInt64]
        var range: Range<Int>
    }
    var directoryRange: Range<Int>
    var head: [UInt8]
    var chunks: [Chunk]
    /// False for the codec's format 4 (the layout with chunks stored raw).
    var compressed = true

    init(_ bytes: [UInt8], compressed: Bool = true) throws {
        self.compressed = compressed
        let directorySize = Int(Self.u32(bytes, 12))
        directoryRange = 64..<(64 + directorySize)
        var offset = directoryRange.lowerBound
        func varint() -> UInt64 { TestVarint.read(bytes, at: &offset) }
        func string() { offset += Int(varint()) }
        _ = varint()  // basis
        for _ in 0..<varint() { string() }
        for _ in 0..<varint() {
            string()
            _ = varint()
            for _ in 0..<varint() {
                string()
                offset += 1
                for _ in 0..<varint() {
                    string()
                    for _ in 0..<varint() { string() }
                }
            }
        }
        let chunkCount = varint()
        head = Array(bytes[directoryRange.lowerBound..<offset])
        chunks = []
        var position = directoryRange.upperBound
        for _ in 0..<chunkCount {
            let kind = UInt64(bytes[offset])
            offset += 1
            var fields = [kind, varint()]
            if kind == 1 { fields.append(varint()) }
            let count = varint()
            let stored = varint()
            let rawSize = varint()
            let checksum = varint()
            fields += [count, stored, rawSize, checksum]
            chunks.append(Chunk(fields: fields, range: position..<(position + Int(stored))))
            position += Int(stored)
        }
    }

    /// The newest snapshot of the store at `path`: its file, bytes and layout.
    static func newest(in path: String) throws -> (file: String, bytes: [UInt8], layout: SnapshotLayout) {
        let file = snapshotFiles(path).last!
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))
        return (file, bytes, try SnapshotLayout(bytes))
    }

    /// Chunk `number`'s raw (decompressed) bytes.
    func raw(of number: Int, in bytes: [UInt8]) throws -> [UInt8] {
        compressed ? try ZstdDecompressor().decompress(bytes[chunks[number].range]) : Array(bytes[chunks[number].range])
    }

    static func u32(_ bytes: [UInt8], _ at: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) }
    }

    /// The file with chunk `number`'s raw bytes replaced, every checksum
    /// and size made to agree.
    func resealing(_ bytes: [UInt8], chunk number: Int, raw: [UInt8], count: UInt64? = nil) throws -> [UInt8] {
        try resealing(bytes, chunks: [number: (raw, count)])
    }

    /// The file with several chunks' raw bytes (and item counts) replaced.
    func resealing(_ bytes: [UInt8], chunks replaced: [Int: (raw: [UInt8], count: UInt64?)]) throws -> [UInt8] {
        var frames = chunks.map { Array(bytes[$0.range]) }
        for (number, replacement) in replaced {
            frames[number] = compressed ? try ZstdCompressor(level: 1).compress(replacement.raw) : replacement.raw
        }
        var directory = head
        func varint(_ value: UInt64) { TestVarint.append(value, to: &directory) }
        for (i, chunk) in chunks.enumerated() {
            var fields = chunk.fields
            let n = fields.count
            if let replacement = replaced[i] {
                fields[n - 3] = UInt64(frames[i].count)
                fields[n - 2] = UInt64(replacement.raw.count)
                fields[n - 1] = UInt64(CRC32C.checksum(frames[i]))
                if let count = replacement.count { fields[n - 4] = count }
            }
            directory.append(UInt8(fields[0]))
            for field in fields.dropFirst() { varint(field) }
        }
        var header = Array(bytes[0..<64])
        func put<T: FixedWidthInteger>(_ value: T, at offset: Int) {
            for i in 0..<MemoryLayout<T>.size { header[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
        }
        put(UInt32(directory.count), at: 12)
        put(UInt64(directory.count + frames.reduce(0) { $0 + $1.count }), at: 32)
        put(CRC32C.checksum(directory), at: 56)
        put(CRC32C.checksum(header[0..<60]), at: 60)
        return header + directory + frames.joined()
    }
}

/// LEB128 varints as the file formats write them, for tests that parse and
/// rewrite files without trusting the reader under test.
enum TestVarint {
    static func read(_ bytes: [UInt8], at offset: inout Int) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = bytes[offset]
            offset += 1
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        var v = value
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }
}

extension SnapshotChunkTests {
    /// A store at `path` with `indexes` and `records` songs (`fields(n)`,
    /// IDs alternately integers and strings) in one transaction,
    /// snapshotted and closed: its value and its newest snapshot.
    static func snapshotted(
        at path: String,
        records: Int,
        indexes: [(name: Key, fields: [FieldPath], unique: Bool)] = [],
        fields: @escaping @Sendable (Int) -> Record
    ) async throws -> (original: Database, file: String, bytes: [UInt8], layout: SnapshotLayout) {
        let store = try await Store.open(at: path, options: testOptions())
        try await store.transact(message: "import") { builder in
            for index in indexes {
                try builder.createIndex(index.name, on: "songs", fields: index.fields, unique: index.unique)
            }
            for n in 0..<records {
                try builder.insert(fields(n), id: n % 2 == 0 ? RecordID(Int64(n)) : RecordID("s\(n)"), into: "songs")
            }
        }
        try await store.snapshot()
        let original = store.current
        try await store.close()
        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        return (original, file, bytes, layout)
    }

    /// A store at `path` holding ``largeDatabase(seed:)`` (no indexes) in
    /// one transaction, snapshotted and closed: its value and its newest
    /// snapshot, which fills several chunks.
    static func snapshottedLarge(
        at path: String,
        seed: UInt64,
        options: StoreOptions = testOptions()
    ) async throws -> (original: Database, file: String, bytes: [UInt8], layout: SnapshotLayout) {
        let database = try largeDatabase(seed: seed)
        let store = try await Store.open(at: path, options: options)
        try await store.transact(message: "import") { builder in
            for (name, table) in database.tables {
                for (id, record) in table.records { try builder.insert(record, id: id, into: name) }
            }
        }
        try await store.snapshot()
        let original = store.current
        try await store.close()
        let (file, bytes, layout) = try SnapshotLayout.newest(in: path)
        #expect(layout.chunks.count >= 4)
        return (original, file, bytes, layout)
    }

    /// `raw` damaged one way: 0 bytes overwritten, 1 cut short, 2 bytes
    /// inserted, 3 a run of 0xFF (a varint that never ends, or runs past
    /// 63 bits), 4 the first byte (an index chunk: the first entry's shared
    /// prefix) set to 1...100, 5 a byte set to 0 or 0x7F (a zero or a
    /// huge length, where a length is).
    static func mutated(_ raw: [UInt8], kind: Int, random: inout SplitMix64) -> [UInt8] {
        var mutated = raw
        switch kind {
        case 0:
            for _ in 0..<(1 + Int(random.next() % 3)) {
                mutated[Int(random.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: random.next())
            }
        case 1:
            mutated.removeLast(1 + Int(random.next() % UInt64(mutated.count)))
        case 2:
            let at = Int(random.next() % UInt64(mutated.count))
            mutated.insert(
                contentsOf: (0..<Int(1 + random.next() % 4)).map { _ in UInt8(truncatingIfNeeded: random.next()) },
                at: at
            )
        case 3:
            let at = Int(random.next() % UInt64(mutated.count))
            mutated.replaceSubrange(at..<at, with: [UInt8](repeating: 0xFF, count: 1 + Int(random.next() % 12)))
        case 4:
            mutated[0] = UInt8(1 + random.next() % 100)
        default:
            let at = Int(random.next() % UInt64(mutated.count))
            mutated[at] = random.next() % 2 == 0 ? 0 : 0x7F
        }
        return mutated
    }

    @Test("hostile index-entry chunks resealed with sound checksums are refused or open sound, never crash")
    func hostileEntryChunks() async throws {
        let path = temporaryStorePath("snapshot-hostile-entries")
        defer { removeStore(path) }
        let indexes: [(name: Key, fields: [FieldPath], unique: Bool)] = [
            ("byTitle", ["title"], false), ("byCode", ["code"], true),
        ]
        let (original, file, bytes, layout) = try await Self.snapshotted(at: path, records: 60, indexes: indexes) { n in
            // Titles over 30 bytes share prefixes past 30 bytes (the
            // entries' inline part), some are short, one is empty.
            let title =
                n % 3 == 0
                ? "A very long shared title prefix, part \(n / 6) — ü \(n)"
                : (n == 1 ? "" : "t\(n % 7)")
            return ["title": .string(title), "code": .int(Int64(n * 7))]
        }
        let entryChunks = layout.chunks.indices.filter { layout.chunks[$0].fields[0] == 1 }
        #expect(entryChunks.count == 2)

        var random = SplitMix64(seed: 2027)
        var accepted = 0
        var refused = 0
        for round in 0..<240 {
            let chunk = entryChunks[round % entryChunks.count]
            let raw = try layout.raw(of: chunk, in: bytes)
            let mutated = Self.mutated(raw, kind: round % 6, random: &random)
            let count: UInt64? = round % 13 == 0 ? UInt64(random.next() % 200) : nil
            try Data(try layout.resealing(bytes, chunk: chunk, raw: mutated, count: count)).write(
                to: URL(fileURLWithPath: file)
            )
            let reopened = try await Store.open(at: path, options: testOptions())
            if Self.skippedSnapshot(reopened.warnings) {
                refused += 1
                #expect(await reopened.current == original, "round \(round)")
            } else {
                // Accepted: the entries were well formed, ordered and (for
                // the unique index) distinct, so the trees answer queries;
                // whether they are the records' entries is verify's to say.
                accepted += 1
                let value = try await reopened.database(inSnapshot: 1)
                #expect(value[table: "songs"].records == original[table: "songs"].records, "round \(round)")
                _ = try value.query("songs").order(by: "title").ids()
                _ = try value.query("songs").where("code", in: .int(0)...(.int(200))).count()
                if value != original {
                    let report = try Store.verify(at: path)
                    #expect(!report.isSound, "round \(round): a snapshot unlike its log passed verify")
                }
            }
            try await reopened.close()
        }
        #expect(refused > 0 && accepted > 0, "accepted \(accepted), refused \(refused)")
        // The untouched snapshot still opens from its chunks.
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        let sound = try await Store.open(at: path, options: testOptions())
        #expect(!Self.skippedSnapshot(sound.warnings))
        #expect(await sound.current == original)
        try await sound.close()
    }
}
