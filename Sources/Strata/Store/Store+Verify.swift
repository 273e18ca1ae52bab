import Foundation

extension Store {
    /// Checks what open trusts without recomputing: every snapshot on disk
    /// is read and decoded, and every index of its value (and of
    /// ``current``) must hold exactly the entries its records give.
    ///
    /// Open checks each snapshot's checksums and structure, which catches
    /// damage on disk; a file that is well formed but whose stored index
    /// entries disagree with its records (written by a faulty or hostile
    /// writer) is found only here. O(store size): meant for a maintenance
    /// command, not for every open.
    ///
    /// - Throws: ``StoreError/corruptSnapshot(file:reason:)`` naming the
    ///   first snapshot that does not decode or whose index disagrees with
    ///   its records (the current value's problems name the store's path).
    public func verify() throws {
        let (directory, fileSystem) = (snapshotDirectory, options.fileSystem)
        let names = try fileSystem.contents(ofDirectory: directory)
            .filter { SnapshotFile.basis(ofName: $0) != nil }.sorted()
        for name in names {
            let value = try StoreError.mappingFormat {
                try SnapshotFile.read(name, in: directory, fileSystem: fileSystem).0
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
