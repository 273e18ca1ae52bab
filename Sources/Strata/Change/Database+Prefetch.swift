import PersistentCollections

extension Database {
    /// Brings into cache the trie paths, and the records' bytes, that
    /// applying `transactions` to this value will read: each table's record
    /// IDs are looked up together (``PersistentMap/prefetch(_:touching:)``),
    /// where applying one change after another waits for memory at every
    /// level of every lookup. For a replay of many small transactions on a
    /// value too large for the cache, a few transactions ahead of the one
    /// applied. Reads only. O(k log16 n) for k changes.
    func _prefetch(_ transactions: some Sequence<Transaction>) {
        // Most runs change one table or two: a list, not a dictionary.
        var ids: [(table: Key, ids: [RecordID])] = []
        for transaction in transactions {
            for (name, changes) in transaction.changes {
                // A large transaction is applied on every core, by parts.
                guard changes.count < Table.concurrentApplyMinimum else { continue }
                if let i = ids.firstIndex(where: { $0.table == name }) {
                    ids[i].ids.append(contentsOf: changes.keys)
                } else {
                    ids.append((name, Array(changes.keys)))
                }
            }
        }
        for (name, tableIDs) in ids {
            guard let table = _tables[name] else { continue }
            // The record's bytes: the header of their buffer.
            table.records.prefetch(tableIDs) { record in UInt(bitPattern: record._bytes.count) }
        }
    }
}
