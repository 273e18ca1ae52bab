import Foundation
import GRDB

/// The SQLite baseline of the `store` scenario, through GRDB: a `songs`
/// table with the music library's columns, and the same single-row
/// durable transactions Strata's store commits.
///
/// Durability matches Strata's `.everyCommit`: WAL with
/// `synchronous = FULL` (GRDB's pool default is NORMAL, which does not
/// sync the WAL at each commit). Imports only GRDB, so its `Database` does
/// not meet Strata's.
final class SQLiteBaseline: Sendable {
    /// One song row, in plain values.
    struct Song: Sendable {
        var id: Int64
        var title: String
        var artist: Int64
        var album: Int64
        var track: Int64
        var path: String
        var duration: Double
        var plays: Int64
        var added: Double
        var rating: Int64
        var tags: String
    }

    let path: String
    let pool: DatabasePool

    init(path: String) throws {
        self.path = path
        pool = try DatabasePool(path: path)
        try pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            let level = try Int.fetchOne(db, sql: "PRAGMA synchronous")
            guard level == 2 else { throw SQLiteBaselineError.notDurable(level ?? -1) }
            try db.execute(
                sql: """
                    CREATE TABLE IF NOT EXISTS songs (
                        id INTEGER PRIMARY KEY, title TEXT, artist INTEGER, album INTEGER, track INTEGER,
                        path TEXT, duration REAL, plays INTEGER, added REAL, rating INTEGER, tags TEXT)
                    """
            )
        }
    }

    /// Inserts `songs` in one transaction.
    func load(_ songs: [Song]) throws {
        try pool.write { db in
            let statement = try db.makeStatement(
                sql: "INSERT INTO songs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            )
            for song in songs {
                try statement.execute(arguments: [
                    song.id, song.title, song.artist, song.album, song.track, song.path, song.duration,
                    song.plays, song.added, song.rating, song.tags,
                ])
            }
        }
    }

    /// One durable transaction setting one song's play count.
    func setPlays(_ plays: Int64, of id: Int64) throws {
        try pool.write { db in try Self.setPlays(plays, of: id, in: db) }
    }

    /// The same, from an async context (GRDB serializes the writers).
    func setPlaysAsync(_ plays: Int64, of id: Int64) async throws {
        try await pool.write { db in try Self.setPlays(plays, of: id, in: db) }
    }

    private static func setPlays(_ plays: Int64, of id: Int64, in db: GRDB.Database) throws {
        try db.execute(sql: "UPDATE songs SET plays = ? WHERE id = ?", arguments: [plays, id])
    }

    /// Turns automatic checkpoints off (on: SQLite's default of 1,000
    /// pages). Turning them off first empties the WAL, so its growth then
    /// measures the bytes written per transaction.
    func setAutomaticCheckpoint(_ on: Bool) throws {
        try pool.writeWithoutTransaction { db in
            if !on { try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(on ? 1_000 : 0)")
        }
    }

    /// The WAL file's size in bytes.
    var walBytes: Int {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path + "-wal")
        return (attributes?[.size] as? NSNumber)?.intValue ?? 0
    }

    func rowCount() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM songs") ?? 0 }
    }
}

enum SQLiteBaselineError: Error, CustomStringConvertible {
    case notDurable(Int)

    var description: String {
        switch self {
        case .notDurable(let level):
            return "SQLite baseline: PRAGMA synchronous reads \(level) after setting FULL (2)"
        }
    }
}
