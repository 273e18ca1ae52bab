import Foundation
import PostgresNIO
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
        try await withConnection(requests: chunks.count + 3) { connection, logger in
            try await connection.withTransaction(logger: logger) { connection in
                // Two peers storing the same basis take turns (the second
                // replaces the first), never a key conflict.
                try await connection.query(
                    "SELECT pg_advisory_xact_lock(hashtext(\(self.store)), \(Int32(truncatingIfNeeded: basis)))",
                    logger: logger
                )
                try await connection.query(
                    "DELETE FROM strata_snapshots WHERE store = \(self.store) AND basis = \(basis)",
                    logger: logger
                )
                for (index, chunk) in chunks.enumerated() {
                    try await connection.query(
                        """
                        INSERT INTO strata_snapshots (store, basis, chunk, chunks, payload, checksum)
                        VALUES (\(self.store), \(basis), \(Int32(index)), \(Int32(chunks.count)),
                                \(ByteBuffer(bytes: chunk)), \(Int64(CRC32C.checksum(chunk))))
                        """,
                        logger: logger
                    )
                }
            }
        }
    }

    /// The bases of the stored snapshots, ascending.
    public func snapshotBases() async throws -> [Int64] {
        try await withConnection(reading: true) { connection, logger in
            let rows = try await connection.query(
                "SELECT DISTINCT basis FROM strata_snapshots WHERE store = \(self.store) ORDER BY basis",
                logger: logger
            )
            var bases: [Int64] = []
            for try await (basis) in rows.decode(Int64.self) { bases.append(basis) }
            return bases
        }
    }

    /// The snapshot at `basis`, its chunks checked (all present, each
    /// checksum, the zstd frame, the encoding, the basis).
    public func snapshot(at basis: Int64) async throws -> Database? {
        // The chunk count first, then one request per chunk: each is
        // given the operation timeout, so a large snapshot on a slow link
        // still arrives.
        let count: Int32? = try await withConnection(reading: true) { connection, logger in
            let result = try await connection.query(
                "SELECT chunks FROM strata_snapshots WHERE store = \(self.store) AND basis = \(basis) AND chunk = 0",
                logger: logger
            )
            var count: Int32?
            for try await (chunks) in result.decode(Int32.self) { count = chunks }
            return count
        }
        guard let count else { return nil }
        guard count >= 1 else {
            throw PostgresStorageError.damaged(store: store, what: "snapshot at \(basis): \(count) chunks")
        }
        var rows: [(Int32, Int32, ByteBuffer, Int64)] = []
        for chunk in 0..<count {
            let row: (Int32, Int32, ByteBuffer, Int64)? = try await withConnection(reading: true) {
                connection,
                logger in
                let result = try await connection.query(
                    """
                    SELECT chunk, chunks, payload, checksum FROM strata_snapshots
                    WHERE store = \(self.store) AND basis = \(basis) AND chunk = \(chunk)
                    """,
                    logger: logger
                )
                var found: (Int32, Int32, ByteBuffer, Int64)?
                for try await row in result.decode((Int32, Int32, ByteBuffer, Int64).self) { found = row }
                return found
            }
            guard let row else {
                throw PostgresStorageError.damaged(
                    store: store,
                    what: "snapshot at \(basis): chunk \(chunk) of \(count) is missing"
                )
            }
            rows.append(row)
        }
        guard !rows.isEmpty else { return nil }
        func damaged(_ what: String) -> PostgresStorageError {
            .damaged(store: store, what: "snapshot at \(basis): \(what)")
        }
        var compressed: [UInt8] = []
        for (position, row) in rows.enumerated() {
            let (chunk, chunks, buffer, checksum) = row
            guard chunk == position, chunks == rows.count else {
                throw damaged("chunk \(position) of \(rows.count) is missing or out of place")
            }
            let bytes = Array(buffer.readableBytesView)
            guard Int64(CRC32C.checksum(bytes)) == checksum else { throw damaged("chunk \(chunk): checksum mismatch") }
            compressed += bytes
        }
        let value: Database
        do {
            value = try BinaryCodec.decodeDatabase(ZstdDecompressor().decompress(compressed))
        } catch {
            throw damaged("does not decode: \(error)")
        }
        guard value.basis == basis else { throw damaged("holds the value at \(value.basis)") }
        return value
    }
}
