import Foundation
import GRDB

/// The `query` scenario's SQLite side: the `songs` table of
/// `SQLiteBaseline` with the same four indexes as Strata's, asked the same
/// questions through GRDB's cached (prepared) statements on one reader
/// connection, page cache warm. Results are read in full (every column),
/// as Strata returns whole records.
extension SQLiteBaseline {
    func createQueryIndexes() throws {
        try pool.write { db in
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS songs_album ON songs(album, track)")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS songs_added ON songs(added)")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS songs_artist ON songs(artist)")
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS songs_title ON songs(title)")
            try db.execute(sql: "ANALYZE")
        }
    }

    /// Runs `body` on one reader connection (no per-query pool dispatch).
    func reading<T>(_ body: (GRDB.Database) throws -> T) throws -> T {
        try pool.read(body)
    }

    /// (a) The songs of one album in track order: their IDs (every column read).
    static func album(_ album: Int64, in db: GRDB.Database) throws -> [Int64] {
        let statement = try db.cachedStatement(sql: "SELECT * FROM songs WHERE album = ? ORDER BY track, id")
        return try Row.fetchAll(statement, arguments: [album]).map { $0["id"] }
    }

    /// (b) The 50 most recently added.
    static func recent(in db: GRDB.Database) throws -> [Int64] {
        let statement = try db.cachedStatement(sql: "SELECT * FROM songs ORDER BY added DESC, id DESC LIMIT 50")
        return try Row.fetchAll(statement).map { $0["id"] }
    }

    /// (c) How many songs one artist has.
    static func count(artist: Int64, in db: GRDB.Database) throws -> Int {
        let statement = try db.cachedStatement(sql: "SELECT COUNT(*) FROM songs WHERE artist = ?")
        return try Int.fetchOne(statement, arguments: [artist]) ?? 0
    }

    /// (d) A page of 25 by title at `offset`.
    static func page(offset: Int, in db: GRDB.Database) throws -> [Int64] {
        let statement = try db.cachedStatement(sql: "SELECT * FROM songs ORDER BY title, id LIMIT 25 OFFSET ?")
        return try Row.fetchAll(statement, arguments: [offset]).map { $0["id"] }
    }
}
