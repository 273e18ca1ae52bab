import DeterministicRandom

/// Record-like bytes for codec benchmarks: one JSON object per line, shaped
/// like a music library's songs (titles, artists, file paths, durations,
/// play counts, dates, tags), drawn from a seed.
enum SyntheticRecordText {
    private static let words = [
        "love", "night", "blue", "river", "fire", "heart", "dream", "city", "light", "road", "rain", "gold",
        "shadow", "summer", "electric", "silent", "wild", "paper", "glass", "echo", "ocean", "static", "velvet",
        "northern", "broken", "satellite", "garden", "midnight", "violet", "thunder", "honey", "machine",
    ]
    private static let genres = ["rock", "jazz", "pop", "folk", "ambient", "hip-hop", "classical", "soul", "live"]

    /// About `byteCount` bytes of records (whole lines; may end a line past it).
    static func make(byteCount: Int, seed: UInt64) -> [UInt8] {
        var random = SplitMix64(seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(byteCount + 512)
        var id = 0
        let artists = (0..<2_000).map { _ in phrase(&random, 2) }
        let albums = (0..<8_000).map { _ in phrase(&random, 3) }
        while out.count < byteCount {
            id += 1
            let artist = artists[Int(random.next() % UInt64(artists.count))]
            let album = albums[Int(random.next() % UInt64(albums.count))]
            let title = phrase(&random, 1 + Int(random.next() % 4))
            let track = 1 + random.next() % 18
            let duration = Double(90 + random.next() % 400) + Double(random.next() % 1000) / 1000
            let plays = random.next() % 500
            let year = 1960 + random.next() % 65
            let tag1 = genres[Int(random.next() % UInt64(genres.count))]
            let tag2 = genres[Int(random.next() % UInt64(genres.count))]
            let line =
                "{\"id\":\(id),\"title\":\"\(title)\",\"artist\":\"\(artist)\",\"album\":\"\(album)\","
                + "\"track\":\(track),\"path\":\"/Music/\(artist)/\(album)/\(track) \(title).m4a\","
                + "\"duration\":\(duration),\"plays\":\(plays),\"added\":\"\(year)-0\(1 + random.next() % 9)-1\(random.next() % 10)\","
                + "\"tags\":[\"\(tag1)\",\"\(tag2)\"]}\n"
            out.append(contentsOf: line.utf8)
        }
        return out
    }

    private static func phrase(_ random: inout SplitMix64, _ count: Int) -> String {
        (0..<count).map { _ in
            let word = words[Int(random.next() % UInt64(words.count))]
            return word.prefix(1).uppercased() + word.dropFirst()
        }.joined(separator: " ")
    }
}
