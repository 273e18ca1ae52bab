import Foundation

extension Store {
    /// Checks what open trusts without recomputing: every record of the
    /// log reads back, checks and is the transaction the history lists at
    /// its place; every snapshot on disk is read and decoded, and every
    /// index of its value (and of ``current``) must hold exactly the
    /// entries its records give.
    ///
    /// Open reads the log only from the newest snapshot on (a sealed
    /// segment before it is known by its summary), and checks each
    /// snapshot's checksums and structure, which catches damage on disk; a
    /// file that is well formed but whose stored index entries disagree
    /// with its records (written by a faulty or hostile writer) is found
    /// only here. O(store size): meant for a maintenance command, not for
    /// every open.
    ///
    /// After ``close()`` only the snapshots are checked. A damaged record
    /// also drops its segment's summary, so that the next open reads the
    /// segment and its recovery option decides.
    ///
    /// - Throws: ``StoreError/corruptLog(segment:offset:reason:)`` naming the
    ///   first record that does not read back or decode, or is not the
    ///   transaction listed; ``StoreError/unsupportedVersion(file:found:supported:)``
    ///   for a record a newer build wrote (not damage); ``StoreError/corruptSnapshot(file:reason:)``
    ///   naming the first snapshot that does not decode or whose index
    ///   disagrees with its records (the current value's problems name the
    ///   store's path). A read-only store throws ``StoreError/historyChanged(segment:offset:reason:)``
    ///   where a writable one throws `corruptLog`: its writer may have cut
    ///   the history since it opened (``verify(at:fileSystem:)`` tells damage).
    public func verify() throws {
        try verifyLog()
        let (directory, fileSystem) = (snapshotDirectory, options.fileSystem)
        let names = try fileSystem.contents(ofDirectory: directory)
            .filter { SnapshotFile.basis(ofName: $0) != nil }.sorted()
        for name in names {
            let value: Database
            do {
                value = try StoreError.mappingFormat {
                    try SnapshotFile.read(name, in: directory, fileSystem: fileSystem).0
                }
            } catch let error as FileSystemError where error.code == ENOENT {
                // Removed since listed (pruned by the store's writer): no
                // snapshot, no damage.
                continue
            }
            if let problem = value._indexProblem() {
                throw StoreError.corruptSnapshot(file: directory + "/" + name, reason: problem)
            }
        }
        if let problem = current._indexProblem() {
            throw StoreError.corruptSnapshot(file: path, reason: "the current value: \(problem)")
        }
    }
}

extension Store {
    /// Reads every record of the log back and compares it with the history.
    private func verifyLog() throws {
        // After close the log is not the store's to read: snapshots only.
        guard let log, history.count > 0 else { return }
        for t in 1...Int64(history.count) {
            let position = history.position(t)
            try log.readingRecord(at: position) { try verifyRecord(t, at: position, in: log) }
        }
    }

    /// Reads record `t` back and compares it with the history.
    private func verifyRecord(_ t: Int64, at position: TransactionLog.Position, in log: TransactionLog) throws {
        let segment = log.segments[position.segment].name
        let transaction = try log.decodedRecord(at: position)
        guard transaction.summary == history.summary(t), transaction.basis == t - 1 else {
            log.forgetSummary(ofSegment: position.segment)
            throw StoreError.corruptLog(
                segment: segment,
                offset: position.offset,
                reason: "the record is transaction \(transaction.id) at t \(transaction.t), "
                    + "where the history lists \(history.summary(t).id) at t \(t)"
            )
        }
    }
}

extension Database {
    /// The first index whose entries are not exactly its table's records'
    /// entries, described; nil when every index agrees. O(n log n).
    func _indexProblem() -> String? {
        for (name, table) in tables {
            for index in table.indexes {
                guard let rebuilt = try? TableIndex(index.definition, records: table.records, table: name) else {
                    return "index \(index.definition.name) of \(name): its records break its uniqueness"
                }
                if !rebuilt.entries.elementsEqual(index.entries) {
                    return "index \(index.definition.name) of \(name): its entries are not its records' entries"
                }
            }
        }
        return nil
    }
}
