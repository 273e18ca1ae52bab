import Foundation
import Strata

extension PostgresHistoryStorage {
    /// Bytes of compressed snapshot per row.
    static let snapshotChunkSize = 1 << 20

    /// Stores `value` (zstd-compressed binary encoding, database format 3)
    /// in chunks of 1 MiB, each with its CRC32C, replacing a snapshot with
    /// the same basis.
    ///
    /// Format 3, not the codec's newest: the hosts sharing a store may run
    /// different builds during an upgrade, and a build before format 4
    /// could not read a snapshot another host wrote in it.
    public func putSnapshot(_ value: Database) async throws {
        let compressed = try ZstdCompressor(level: 3).compress(try BinaryCodec.encode(value, version: 3))
        let size = Self.snapshotChunkSize
        let chunks = stride(from: 0, to: max(compressed.count, 1), by: size).map {
            Array(compressed[$0..<min(compressed.count, $0 + size)])
        }
        let basis = value.basis
        let store = self.store
        try await withConnection(requests: chunks.count + 3) { client in
            try client.transaction {
                // Two peers storing the same basis take turns (the second
                // replaces the first), never a key conflict.
                _ = try client.execute(
                    "SELECT pg_advisory_xact_lock(hashtext($1), $2)",
                    [.text(store), .int32(Int32(truncatingIfNeeded: basis))]
                )
                _ = try client.execute(
                    "DELETE FROM strata_snapshots WHERE store = $1 AND basis = $2",
                    [.text(store), .int64(basis)]
                )
                for (index, chunk) in chunks.enumerated() {
                    _ = try client.execute(
                        """
                        INSERT INTO strata_snapshots (store, basis, chunk, chunks, payload, checksum)
                        VALUES ($1, $2, $3, $4, $5, $6)
                        """,
                        [
                            .text(store), .int64(basis), .int32(Int32(index)), .int32(Int32(chunks.count)),
                            .bytes(chunk), .int64(Int64(CRC32C.checksum(chunk))),
                        ]
                    )
                }
            }
        }
    }

    /// The bases of the stored snapshots, ascending.
    public func snapshotBases() async throws -> [Int64] {
        let store = self.store
        let rows = try await withConnection(reading: true) { client in
            try client.execute(
                "SELECT DISTINCT basis FROM strata_snapshots WHERE store = $1 ORDER BY basis",
                [.text(store)]
            ).rows
        }
        return try rows.map { row in
            guard let basis = row.first??.int64 else {
                throw PostgresStorageError.damaged(store: store, what: "a snapshot basis does not decode: \(row)")
            }
            return basis
        }
    }

    /// The snapshot at `basis`, its chunks checked (all present, each
    /// checksum, the zstd frame, the encoding, the basis).
    public func snapshot(at basis: Int64) async throws -> Database? {
        // The chunk count first, for the time limit: every chunk read is
        // given the operation timeout, so a large snapshot on a slow link
        // still arrives.
        let store = self.store
        @Sendable func damaged(_ what: String) -> PostgresStorageError {
            .damaged(store: store, what: "snapshot at \(basis): \(what)")
        }
        let countQuery = "SELECT chunks FROM strata_snapshots WHERE store = $1 AND basis = $2 AND chunk = 0"
        let first: PostgresValue? = try await withConnection(reading: true) { client in
            try client.execute(countQuery, [.text(store), .int64(basis)]).scalar
        }
        guard let first else { return nil }
        guard let expected = first.int32, expected >= 1 else { throw damaged("\(first) chunks") }
        // Every chunk from one view of the table (one repeatable-read
        // transaction): a peer replacing this basis meanwhile cannot mix
        // chunks of two versions.
        let read: [(Int32, Int32, [UInt8], Int64)]? = try await withConnection(
            reading: true,
            requests: Int(expected) + 3
        ) { client in
            try client.transaction(beginning: "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY") {
                guard let now = try client.execute(countQuery, [.text(store), .int64(basis)]).scalar else {
                    return nil
                }
                guard let count = now.int32, count >= 1 else { throw damaged("\(now) chunks") }
                var rows: [(Int32, Int32, [UInt8], Int64)] = []
                for chunk in 0..<count {
                    let found = try client.execute(
                        """
                        SELECT chunk, chunks, payload, checksum FROM strata_snapshots
                        WHERE store = $1 AND basis = $2 AND chunk = $3
                        """,
                        [.text(store), .int64(basis), .int32(chunk)]
                    ).rows.first
                    guard let found else { throw damaged("chunk \(chunk) of \(count) is missing") }
                    guard found.count == 4, let index = found[0]?.int32, let chunks = found[1]?.int32,
                        let bytes = found[2]?.bytes, let checksum = found[3]?.int64
                    else { throw damaged("chunk \(chunk) does not decode") }
                    rows.append((index, chunks, bytes, checksum))
                }
                return rows
            }
        }
        guard let rows = read, !rows.isEmpty else { return nil }
        var compressed: [UInt8] = []
        for (position, row) in rows.enumerated() {
            let (chunk, chunks, bytes, checksum) = row
            guard chunk == position, chunks == rows.count else {
                throw damaged("chunk \(position) of \(rows.count) is missing or out of place")
            }
            guard Int64(CRC32C.checksum(bytes)) == checksum else { throw damaged("chunk \(chunk): checksum mismatch") }
            compressed += bytes
        }
        let value: Database
        do {
            value = try BinaryCodec.decodeDatabase(ZstdDecompressor().decompress(compressed))
        } catch {
            throw PostgresStorageError.undecodable(error, store: store, what: "snapshot at \(basis)")
        }
        guard value.basis == basis else { throw damaged("holds the value at \(value.basis)") }
        return value
    }
}
