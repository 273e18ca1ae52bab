import Synchronization

/// Collects what one run of an observer's closure reads: the database it
/// is handed carries this recorder, and each read path notes itself.
///
/// Thread-safe because a closure may hand its database to other threads;
/// a copy that escapes the closure notes nothing once the run has ended.
final class ReadRecorder: Sendable {
    private let state = Mutex<(reads: ReadSet, open: Bool)>((ReadSet(), true))

    func noteEverything() {
        state.withLock { state in
            if state.open { state.reads.everything = true }
        }
    }

    func noteTable(_ table: Key) {
        state.withLock { state in
            if state.open { state.reads.tables.insert(table) }
        }
    }

    func noteRecord(_ id: RecordID, in table: Key) {
        state.withLock { state in
            guard state.open, !state.reads.tables.contains(table) else { return }
            state.reads.records.insert(ReadSet.RecordRead(table: table, id: id))
        }
    }

    func noteRange(_ range: Range<IndexEntry>, of index: Key, in table: Key) {
        state.withLock { state in
            guard state.open, !state.reads.tables.contains(table) else { return }
            state.reads.ranges.insert(ReadSet.RangeRead(table: table, index: index, range: range))
        }
    }

    /// Ends the run: what it read, with reads made redundant by a whole
    /// table dropped.
    func finish() -> ReadSet {
        state.withLock { state in
            state.open = false
            var reads = state.reads
            if reads.everything {
                reads = ReadSet(everything: true)
            } else if !reads.tables.isEmpty {
                reads.records = reads.records.filter { !reads.tables.contains($0.table) }
                reads.ranges = reads.ranges.filter { !reads.tables.contains($0.table) }
            }
            return reads
        }
    }
}
