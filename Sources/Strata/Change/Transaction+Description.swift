extension Transaction: CustomStringConvertible {
    /// Changes listed whole by ``description``; more are counted.
    static let describedChanges = 16

    /// Its number, message and changes, in table and record order, its
    /// index declarations first (a large transaction lists the first few
    /// and counts the rest):
    ///
    ///     Transaction t 3 (basis 2) "Rename": songs 7 update {title: "Blue" → "Blue River"}
    ///     Transaction t 9 (basis 4, covers 5) "": songs 1 insert {…}; … and 140 more changes
    ///     Transaction t 10 (basis 9) "Index": songs create index byAlbum(album, track)
    ///
    /// O(changes log changes).
    public var description: String {
        var head = "Transaction t \(t) (basis \(basis)"
        if !covers.isEmpty { head += ", covers \(covers.count)" }
        if let reverts { head += ", reverts \(reverts)" }
        head += ") " + String(reflecting: message)
        var parts: [String] = []
        var total = 0
        for table in indexChanges.keys.sorted() {
            for (name, change) in indexChanges[table]!.sorted(by: { $0.key < $1.key }) {
                total += 1
                guard parts.count < Self.describedChanges else { continue }
                parts.append("\(table) " + Self.describe(change, name: name))
            }
        }
        for table in changes.keys.sorted() {
            let byID = changes[table]!
            total += byID.count
            guard parts.count < Self.describedChanges else { continue }
            for (id, change) in byID.sorted(by: { $0.key < $1.key }) where parts.count < Self.describedChanges {
                parts.append("\(table) \(id) \(change)")
            }
        }
        if parts.isEmpty { return head + ": no changes" }
        let rest = total - parts.count
        return head + ": " + parts.joined(separator: "; ") + (rest > 0 ? "; … and \(rest) more changes" : "")
    }

    /// `create index byAlbum(album, track)`, `drop index byAlbum(…)`,
    /// `replace index byAlbum(album) → byAlbum(album, track)`.
    static func describe(_ change: IndexChange, name: Key) -> String {
        switch (change.old, change.new) {
        case (nil, let new?): return "create index \(new)"
        case (let old?, nil): return "drop index \(old)"
        case (let old?, let new?): return "replace index \(old) → \(new)"
        case (nil, nil): return "index \(name) unchanged"
        }
    }
}
