import PersistentCollections

// The byte estimates the memory budget is enforced with. They follow
// StoreMemory's accounting (requested bytes of trie nodes and record
// buffers), without its identity table, so that they are cheap enough to
// keep up to date as the store works.

extension Record {
    /// Bytes of this record's buffer: header and capacity.
    var _allocatedBytes: Int { 32 + _bytes.capacity }

    /// Whether `other` holds the very same buffer (a copy never mutated).
    func _sharesStorage(with other: Record) -> Bool {
        _bytes.withUnsafeBufferPointer { mine in
            other._bytes.withUnsafeBufferPointer { theirs in mine.baseAddress == theirs.baseAddress }
        }
    }
}

extension Database {
    /// Bytes of this value's trie nodes and record buffers. O(n).
    var _allocatedBytes: Int {
        tables.allocatedBytes { table in
            table.records.allocatedBytes { $0._allocatedBytes }
        }
    }

    /// ``_allocatedBytes``, or nil when `stop` returned true during the
    /// walk (asked every 4,096 records, and the walk ends there): a closing
    /// store ends its measurement early. O(n).
    func _allocatedBytes(unless stop: () -> Bool) -> Int? {
        struct Stopped: Error {}
        var seen = 0
        return try? tables.allocatedBytes { table in
            try table.records.allocatedBytes { record in
                seen &+= 1
                if seen & 4095 == 0, stop() { throw Stopped() }
                return record._allocatedBytes
            }
        }
    }

    /// Bytes this value holds that `other` does not: trie nodes (tables
    /// and records) and record buffers. O(changes between them · depth).
    func _bytes(notSharedWith other: Database) -> Int {
        var bytes = tables.nodeBytes(notSharedWith: other.tables)
        for (name, table) in tables {
            bytes += table.records.nodeBytes(notSharedWith: other.tables[name]?.records ?? PersistentMap()) {
                mine,
                theirs in
                theirs.map { mine._sharesStorage(with: $0) } == true ? 0 : mine._allocatedBytes
            }
        }
        return bytes
    }
}

extension Transaction {
    /// About what this transaction holds in memory: each change's share
    /// of its map's nodes and the record it carries (counted whole, though
    /// a record just committed is shared with the current value). O(changes).
    var _estimatedBytes: Int {
        var bytes = 256
        for (_, table) in changes {
            for (_, change) in table {
                bytes += Self._bytesPerChange
                switch change {
                case .insert(let record), .delete(let record): bytes += record._allocatedBytes
                case .update(let fields): bytes += Self._updateBytes(fields)
                }
            }
        }
        return bytes
    }

    /// A change's share of its map's trie nodes (key, value and node slack).
    static let _bytesPerChange = 64

    /// A field-level update's dictionary and the values it holds, old and new.
    static func _updateBytes(_ fields: [Key: FieldChange]) -> Int {
        var bytes = 64 + fields.count * 2 * MemoryLayout<(Key, FieldChange)>.stride
        for change in fields.values {
            bytes += (change.old?._outOfLineBytes ?? 0) + (change.new?._outOfLineBytes ?? 0)
        }
        return bytes
    }
}

extension Value {
    /// About the heap bytes this value holds beyond its inline size: a long
    /// string's or a byte array's storage, a list's or map's nodes and
    /// elements. O(its size).
    var _outOfLineBytes: Int {
        switch self {
        case .null, .bool, .int, .double, .date: return 0
        case .string(let text): return text.utf8.count > 15 ? 32 + text.utf8.count : 0
        case .bytes(let bytes): return 32 + bytes.count
        case .reference(let reference): return 48 + reference.table.string.utf8.count
        case .list(let list):
            return list.reduce(32 + list.count * MemoryLayout<Value>.stride) { $0 + $1._outOfLineBytes }
        case .map(let map):
            return map.reduce(32 + map.count * (MemoryLayout<Key>.stride + MemoryLayout<Value>.stride)) {
                $0 + $1.value._outOfLineBytes + ($1.key.string.utf8.count > 15 ? 32 + $1.key.string.utf8.count : 0)
            }
        }
    }
}
