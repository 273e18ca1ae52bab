import DeterministicRandom
import Foundation
import PersistentCollections
import Strata

/// A synthetic music library: songs, albums and artists with realistic
/// field sizes (titles, names, file paths, durations, play counts, dates,
/// tags), drawn from a seed.
public struct MusicLibrary {
    public static let words = [
        "love", "night", "blue", "river", "fire", "heart", "dream", "city", "light", "road", "rain", "gold",
        "shadow", "summer", "electric", "silent", "wild", "paper", "glass", "echo", "ocean", "static", "velvet",
        "northern", "broken", "satellite", "garden", "midnight", "violet", "thunder", "honey", "machine",
    ]
    public static let genres = ["rock", "jazz", "pop", "folk", "ambient", "hip-hop", "classical", "soul", "live"]

    public var random: SplitMix64

    public init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    public mutating func phrase(_ count: Int) -> String {
        (0..<count).map { _ in
            let word = Self.words[random.int(below: Self.words.count)]
            return word.prefix(1).uppercased() + word.dropFirst()
        }.joined(separator: " ")
    }

    /// A song record of 10 fields.
    public mutating func song(_ n: Int, artists: Int, albums: Int) -> Record {
        let artist = random.int(below: max(artists, 1))
        let album = random.int(below: max(albums, 1))
        let title = phrase(1 + random.int(below: 4))
        var record = Record()
        record["title"] = .string(title)
        record["artist"] = .reference(RecordReference(table: "artists", id: RecordID(artist)))
        record["album"] = .reference(RecordReference(table: "albums", id: RecordID(album)))
        record["track"] = .int(Int64(1 + random.int(below: 18)))
        record["path"] = .string("/Music/Artist \(artist)/Album \(album)/\(n % 18 + 1) \(title).m4a")
        record["duration"] = .double(Double(90 + random.int(below: 400)) + Double(random.int(below: 1000)) / 1000)
        record["plays"] = .int(Int64(random.int(below: 500)))
        record["added"] = .date(Date(timeIntervalSinceReferenceDate: Double(random.int(below: 700_000_000))))
        record["rating"] = .int(Int64(random.int(below: 6)))
        record["tags"] = .list([
            .string(Self.genres[random.int(below: Self.genres.count)]),
            .string(Self.genres[random.int(below: Self.genres.count)]),
        ])
        return record
    }

    /// A database of `songs` songs plus albums (1 per 10 songs) and artists
    /// (1 per 50 songs), built in bulk.
    public mutating func database(songs: Int) -> Database {
        let albums = max(1, songs / 10)
        let artists = max(1, songs / 50)
        var songRecords: [(RecordID, Record)] = []
        songRecords.reserveCapacity(songs)
        for n in 0..<songs { songRecords.append((RecordID(n), song(n, artists: artists, albums: albums))) }
        let albumRecords = (0..<albums).map { n -> (RecordID, Record) in
            (RecordID(n), ["name": .string(phrase(3)), "year": .int(Int64(1960 + random.int(below: 65)))])
        }
        let artistRecords = (0..<artists).map { n -> (RecordID, Record) in (RecordID(n), ["name": .string(phrase(2))]) }
        return Database(
            tables: [
                "songs": Table(records: PersistentMap(uniqueKeysWithValues: songRecords)),
                "albums": Table(records: PersistentMap(uniqueKeysWithValues: albumRecords)),
                "artists": Table(records: PersistentMap(uniqueKeysWithValues: artistRecords)),
            ],
            basis: 1
        )
    }
}
