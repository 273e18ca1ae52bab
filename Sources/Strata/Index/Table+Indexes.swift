import PersistentCollections

extension Table {
    /// The index named `name`, or nil. O(indexes).
    public func index(named name: Key) -> TableIndex? {
        indexes.first { $0.definition.name == name }
    }

    /// The declared indexes' definitions, by name.
    public var indexDefinitions: [IndexDefinition] { indexes.map(\.definition) }

    /// Checks every declaration change against the current declarations,
    /// and removes those dropped or replaced.
    /// - Throws: ``ApplyError/invalidIndex(table:index:reason:)`` for a
    ///   change filed under another name than its definitions', or a
    ///   definition with no fields or a path no query can name;
    ///   ``ApplyError/indexConflict(table:index:expected:found:)``.
    mutating func removeIndexes(for changes: [Key: IndexChange], tableName: Key) throws {
        for (name, change) in changes {
            for definition in [change.old, change.new].compactMap({ $0 }) {
                let reason: String? =
                    definition.name != name
                    ? "the change is filed under '\(name)' but declares '\(definition.name)'"
                    : definition.fields.isEmpty
                        ? "an index needs at least one field"
                        : definition.fields.first { !$0.isNameable }.map {
                            "field path '\($0)' has an empty field or key"
                        }
                if let reason { throw ApplyError.invalidIndex(table: tableName, index: name, reason: reason) }
            }
            // What a log reads back: a change changes its declaration.
            if change.old == change.new {
                throw ApplyError.invalidIndex(
                    table: tableName,
                    index: name,
                    reason: change.old == nil
                        ? "the change declares no index before or after it"
                        : "the change declares the same index before and after it"
                )
            }
            let current = index(named: name)?.definition
            guard current == change.old else {
                throw ApplyError.indexConflict(table: tableName, index: name, expected: change.old, found: current)
            }
            if current != nil { indexes.removeAll { $0.definition.name == name } }
        }
    }

    /// Builds the indexes created or replaced, from the table's records.
    /// O(n log n) per index.
    mutating func addIndexes(for changes: [Key: IndexChange], tableName: Key) throws {
        for (_, change) in changes {
            guard let definition = change.new else { continue }
            let built = try TableIndex(definition, records: records, table: tableName)
            let position = indexes.firstIndex { definition.name < $0.definition.name } ?? indexes.endIndex
            indexes.insert(built, at: position)
        }
    }

    /// Keeps every index in step with the changed records.
    ///
    /// An index no change may move is not touched: changing an element of
    /// `indexes` in place copies the array when another value shares it
    /// (an apply keeps the value before), which an edit of fields no index
    /// covers (a play count) need not pay for. The indexes to change are
    /// found first, and the array is left alone when there are none: with a
    /// mutation inside the loop, the optimizer made the array unique before
    /// the loop, whether or not any index was then changed.
    mutating func updateIndexes(_ updates: [RecordUpdate], tableName: Key) throws {
        var moving: [Int] = []
        for i in indexes.indices where updates.contains(where: { indexes[i].definition.mayMove(after: $0.fields) }) {
            moving.append(i)
        }
        guard !moving.isEmpty else { return }
        for i in moving { try indexes[i].update(updates, table: tableName, checked: updates.count == 1) }
    }
}

extension Table {
    /// Traps unless every index holds exactly one entry per record, equal
    /// to the entry its definition gives that record, and its tree holds its
    /// invariants. O(indexes · n log n). For tests and debug builds.
    public func _invariantCheck() {
        for index in indexes {
            index.entries._invariantCheck()
            precondition(index.entries.count == records.count, "index \(index.definition.name): entry count")
            var expected = records.map { index.definition.entry(for: $0.value, id: $0.key) }
            expected.sort()
            precondition(index.entries.elementsEqual(expected), "index \(index.definition.name): entries")
        }
        for (a, b) in zip(indexes, indexes.dropFirst()) {
            precondition(a.definition.name < b.definition.name, "indexes not sorted by name")
        }
    }
}

extension Database {
    /// Runs every table's ``Table/_invariantCheck()``. For tests.
    public func _invariantCheck() {
        for (_, table) in tables { table._invariantCheck() }
    }
}
