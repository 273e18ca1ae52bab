import BenchWorkloads

/// Record-like bytes for codec benchmarks: one JSON object per line, shaped
/// like a music library's songs (titles, artists, file paths, durations,
/// play counts, dates, tags), drawn from a seed.
enum SyntheticRecordText {
    /// About `byteCount` bytes of records (whole lines; may end a line past it).
    static func make(byteCount: Int, seed: UInt64) -> [UInt8] {
        var library = MusicLibrary(seed: seed)
        var out: [UInt8] = []
        out.reserveCapacity(byteCount + 512)
        var id = 0
        let artists = (0..<2_000).map { _ in library.phrase(2) }
        let albums = (0..<8_000).map { _ in library.phrase(3) }
        while out.count < byteCount {
            id += 1
            let artist = artists[library.random.int(below: artists.count)]
            let album = albums[library.random.int(below: albums.count)]
            let title = library.phrase(1 + library.random.int(below: 4))
            let track = 1 + library.random.int(below: 18)
            let duration = Double(90 + library.random.int(below: 400)) + Double(library.random.int(below: 1000)) / 1000
            let plays = library.random.int(below: 500)
            let year = 1960 + library.random.int(below: 65)
            let month = 1 + library.random.int(below: 9)
            let day = 10 + library.random.int(below: 10)
            let tag1 = MusicLibrary.genres[library.random.int(below: MusicLibrary.genres.count)]
            let tag2 = MusicLibrary.genres[library.random.int(below: MusicLibrary.genres.count)]
            let line =
                "{\"id\":\(id),\"title\":\"\(title)\",\"artist\":\"\(artist)\",\"album\":\"\(album)\","
                + "\"track\":\(track),\"path\":\"/Music/\(artist)/\(album)/\(track) \(title).m4a\","
                + "\"duration\":\(duration),\"plays\":\(plays),\"added\":\"\(year)-0\(month)-\(day)\","
                + "\"tags\":[\"\(tag1)\",\"\(tag2)\"]}\n"
            out.append(contentsOf: line.utf8)
        }
        return out
    }
}
