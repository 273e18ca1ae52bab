import GRDB
import Strata

/// The `typed` scenario's model: one song as an app declares it, Codable,
/// stored by Strata (``StoredRecord``) and by GRDB (`FetchableRecord`,
/// `PersistableRecord`) from the same struct and the same rows.
struct TypedSong: Codable, Equatable, Sendable, StoredRecord, FetchableRecord, PersistableRecord {
    static let table: Strata.Key = "songs"
    static let databaseTableName = "songs"

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

    init(_ row: SQLiteBaseline.Song) {
        id = row.id
        title = row.title
        artist = row.artist
        album = row.album
        track = row.track
        path = row.path
        duration = row.duration
        plays = row.plays
        added = row.added
        rating = row.rating
        tags = row.tags
    }
}
