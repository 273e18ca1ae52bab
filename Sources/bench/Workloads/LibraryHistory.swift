import BenchWorkloads
import DeterministicRandom
import Foundation
import PersistentCollections
import Strata

/// A history of a music library shaped like real use, committed one
/// transaction at a time: mostly single edits (a play count, a rating), some
/// edits of a handful of songs, imports of 10–1,000 songs, deletes of 1–1,000,
/// re-imports of deleted songs, rare bulk edits of 1,000 songs, and reverts
/// (of one recent transaction, or back a few values). Deletes take about what
/// imports add, so the library keeps its size. Drawn from a seed.
///
/// The mix (per million transactions, in ``mix``) is mostly edits of one song, as
/// an app that counts plays and takes ratings makes them; the batch operations
/// are rare but carry most of the changes (an average transaction changes
/// about 5 records, of which imports and deletes make about half).
struct LibraryHistory {
    /// What one transaction does.
    enum Kind: String, CaseIterable {
        case edit = "single edit"
        case smallEdit = "edit of 2–20 songs"
        case importSongs = "import of 10–1,000"
        case delete = "delete of 1–1,000"
        case reimport = "re-import of deleted songs"
        case bulkEdit = "bulk edit of 1,000"
        case revert = "revert"
    }

    /// Per-million draw thresholds, cumulative, in `Kind` order.
    static let mix: [(Kind, Int)] = [
        (.edit, 927_500), (.smallEdit, 50_000), (.importSongs, 5_000), (.delete, 5_000),
        (.reimport, 2_000), (.bulkEdit, 500), (.revert, 10_000),
    ]

    private var library: MusicLibrary
    private var random: SplitMix64
    /// Live song numbers, with each one's index, for O(1) draws and removals.
    private var live: [Int] = []
    private var index: [Int: Int] = [:]
    /// Deleted batches, newest last, for re-imports.
    private var deletedBatches: [[(RecordID, Record)]] = []
    private var nextSong: Int
    private var recent: [UUID] = []
    private let artists: Int
    private let albums: Int
    /// Transactions committed, by kind.
    private(set) var counts: [Kind: Int] = [:]
    /// Reverts that conflicted with a later edit (committed as an edit instead).
    private(set) var revertConflicts = 0
    /// Songs in the library now.
    var songCount: Int { live.count }

    init(seed: UInt64, songs: Int) {
        library = MusicLibrary(seed: seed &+ 1)
        random = SplitMix64(seed: seed &+ 2)
        nextSong = songs
        artists = max(1, songs / 50)
        albums = max(1, songs / 10)
        for n in 0..<songs { add(n) }
    }

    /// Draws the next transaction and commits it to `store`.
    @discardableResult
    mutating func commitNext(to store: Store) async throws -> CommitReport {
        var kind = draw()
        if kind == .reimport && deletedBatches.isEmpty { kind = .importSongs }
        if kind == .delete && live.count < 100 { kind = .importSongs }
        if kind == .revert && recent.isEmpty { kind = .edit }
        let report: CommitReport
        switch kind {
        case .edit: report = try await edit(store, count: 1)
        case .smallEdit: report = try await edit(store, count: 2 + random.int(below: 19))
        case .bulkEdit: report = try await edit(store, count: min(1_000, live.count))
        case .importSongs: report = try await importSongs(store, count: logUniform(10, 1_000))
        case .delete: report = try await delete(store, count: min(logUniform(1, 1_000), live.count / 4))
        case .reimport:
            // A revert may have brought some of the batch back already.
            let batch = deletedBatches.removeLast().filter { id, _ in
                guard case .integer(let value) = id.kind else { return false }
                return index[Int(value)] == nil
            }
            report =
                batch.isEmpty
                ? try await importSongs(store, count: logUniform(10, 1_000))
                : try await store.transact(message: "Re-import \(batch.count) songs") { builder in
                    for (id, record) in batch { try builder.insert(record, id: id, into: "songs") }
                }
        case .revert:
            report = try await revert(store)
        }
        counts[kind, default: 0] += 1
        track(report)
        return report
    }

    private mutating func draw() -> Kind {
        var point = random.int(below: 1_000_000)
        for (kind, share) in Self.mix {
            if point < share { return kind }
            point -= share
        }
        return .edit
    }

    /// Log-uniform in `low...high`: small batches common, large ones rare.
    private mutating func logUniform(_ low: Int, _ high: Int) -> Int {
        let u = Double(random.int(below: 1 << 20)) / Double(1 << 20)
        return min(high, Int(Double(low) * pow(Double(high) / Double(low), u)))
    }

    private mutating func someSongs(_ count: Int) -> [RecordID] {
        var chosen = Set<Int>()
        while chosen.count < min(count, live.count) { chosen.insert(live[random.int(below: live.count)]) }
        return chosen.sorted().map { RecordID($0) }
    }

    private mutating func edit(_ store: Store, count: Int) async throws -> CommitReport {
        let ids = someSongs(count)
        let plays = Int64(random.int(below: 10_000))
        let rating = Int64(random.int(below: 6))
        let title = library.phrase(2)
        let message = count == 1 ? "Edit" : "Edit \(count) songs"
        return try await store.transact(message: message) { builder in
            for (n, id) in ids.enumerated() {
                switch (count, n % 3) {
                case (1, _), (_, 0): try builder.update(id, in: "songs", [.set("plays", .int(plays &+ Int64(n)))])
                case (_, 1): try builder.update(id, in: "songs", [.set("rating", .int(rating))])
                default: try builder.update(id, in: "songs", [.set("title", .string(title))])
                }
            }
        }
    }

    private mutating func importSongs(_ store: Store, count: Int) async throws -> CommitReport {
        let first = nextSong
        nextSong += count
        let records = (first..<(first + count)).map { library.song($0, artists: artists, albums: albums) }
        return try await store.transact(message: "Import \(count) songs") { builder in
            for (n, record) in records.enumerated() {
                try builder.insert(record, id: RecordID(first + n), into: "songs")
            }
        }
    }

    private mutating func delete(_ store: Store, count: Int) async throws -> CommitReport {
        let ids = someSongs(max(1, count))
        return try await store.transact(message: "Delete \(ids.count) songs") { builder in
            for id in ids { try builder.delete(id, from: "songs") }
        }
    }

    /// Reverts one of the last 50 transactions, or one time in four goes
    /// back to the value of a few transactions ago.
    private mutating func revert(_ store: Store) async throws -> CommitReport {
        if random.int(below: 4) == 0 {
            let now = store.current.basis
            return try await store.revert(to: max(0, now - Int64(1 + random.int(below: 5))))
        }
        let target = recent[recent.count - 1 - random.int(below: min(50, recent.count))]
        do {
            return try await store.revert(transaction: target)
        } catch StoreError.revertConflict {
            revertConflicts += 1
            return try await edit(store, count: 1)
        }
    }

    /// Follows the committed changes: live songs, deleted batches, recent IDs.
    private mutating func track(_ report: CommitReport) {
        recent.append(report.transaction.id)
        if recent.count > 100 { recent.removeFirst(recent.count - 100) }
        guard let songs = report.changes["songs"] else { return }
        var removed: [(RecordID, Record)] = []
        for (id, change) in songs {
            guard case .integer(let value) = id.kind else { continue }
            switch change {
            case .insert: add(Int(value))
            case .delete(let old):
                remove(Int(value))
                removed.append((id, old))
            case .update: break
            }
        }
        if !removed.isEmpty && removed.count <= 1_000 {
            deletedBatches.append(removed)
            if deletedBatches.count > 100 { deletedBatches.removeFirst() }
        }
    }

    private mutating func add(_ song: Int) {
        guard index[song] == nil else { return }
        index[song] = live.count
        live.append(song)
    }

    private mutating func remove(_ song: Int) {
        guard let position = index.removeValue(forKey: song) else { return }
        let last = live.removeLast()
        if position < live.count {
            live[position] = last
            index[last] = position
        }
    }
}
