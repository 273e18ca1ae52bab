import Foundation

/// Compaction off the store's actor. What a block takes is gathered on the
/// actor, where the history lives (blocks kept in memory, which block files
/// to read, and below them the raw transactions: decoded when cached, else
/// where their log records are); it is read, built, compressed and written
/// to a temporary file on a thread of its own; and installed on the actor —
/// kept in memory and renamed into place — only if the history has not been
/// cut meanwhile.
extension RunIndex {
    /// How to obtain one block, or at the leaves one transaction.
    indirect enum BlockPlan: Sendable {
        /// A block kept in memory.
        case kept(Transaction)
        /// A raw transaction of the history (a part of a level-0 block).
        case transaction(Transaction)
        /// Transaction `t`, read from its log record (`size` bytes at
        /// `offset` of the segment file at `path`) and checked (its number
        /// and its ID, `id`).
        case logged(t: Int64, id: UUID, path: String, offset: Int, size: Int)
        /// A block read from its file, checked against the ID of its last
        /// transaction.
        case stored(level: Int, index: Int64, lastID: UUID)
        /// A block flattened from its 16 parts (blocks of the level below,
        /// or transactions at level 0).
        case built(level: Int, index: Int64, lastID: UUID, parts: [BlockPlan])
    }

    /// Where a round's parts come from, read on the actor.
    struct PlanSource {
        /// Transaction `t`: `.transaction` when it is kept decoded, else `.logged`.
        var transaction: (Int64) -> BlockPlan
        /// The ID of transaction `t`: a block file must name it for its last.
        var id: (Int64) -> UUID
    }

    /// One block: its level and index.
    struct BlockKey: Hashable, Sendable {
        var level: Int
        var index: Int64
    }

    /// What ``build(_:files:fileSystem:generation:)`` made, for ``install(_:)``.
    struct Built: Sendable {
        /// A block made, with the temporary file holding it when its level
        /// is persisted and it was written.
        struct Block: Sendable {
            var key: BlockKey
            var block: Transaction
            var temporary: String?
            /// Its estimated bytes in memory, counted off the actor.
            var bytes: Int
        }

        /// The history generation the plans were gathered from.
        var generation: Int
        /// Blocks made, parts before the blocks made of them.
        var blocks: [Block] = []
        /// Block files that did not read back as the block expected; the
        /// blocks that needed them were not built.
        var unreadable: [BlockKey] = []
        /// Whether a log record did not read back or a flatten failed (a
        /// damaged history, or one cut meanwhile): those blocks were not built.
        var failed = false
    }

    /// What building block `index` of `level` takes, or nil when it is kept
    /// in memory or has a file already (nothing to build). No decoding and
    /// no reads: O(parts not kept, down to the transactions).
    func plan(level: Int, index: Int64, source: PlanSource) -> BlockPlan? {
        let plan = part(level: level, index: index, source: source)
        if case .built = plan { return plan }
        return nil
    }

    private func part(level: Int, index: Int64, source: PlanSource) -> BlockPlan {
        if let kept = blocks[level][index] { return .kept(kept) }
        let size = Self.blockSize(level)
        let (first, last) = (index * size + 1, (index + 1) * size)
        let lastID = source.id(last)
        if level >= Self.persistedLevel, let files, files.exists(level: level, first: first) {
            return .stored(level: level, index: index, lastID: lastID)
        }
        let parts: [BlockPlan]
        if level == 0 {
            parts = (first...last).map(source.transaction)
        } else {
            parts = (0..<Self.fanout).map { child in
                part(level: level - 1, index: index * Self.fanout + child, source: source)
            }
        }
        return .built(level: level, index: index, lastID: lastID, parts: parts)
    }

    /// Carries out `plans` in order, a block two plans share once: reads
    /// the logged and stored parts, flattens, and writes each block made of
    /// a persisted level to a temporary beside its name. Touches no store
    /// state, so it runs off the store's actor. O(changes in the parts).
    /// Stops before the next plan once `stopped` returns true (the store
    /// let go of), reporting the round failed.
    static func build(
        _ plans: [BlockPlan],
        files: BlockFiles?,
        fileSystem: any FileSystem,
        generation: Int,
        until stopped: () -> Bool = { false }
    ) -> Built {
        var built = Built(generation: generation)
        var done: [BlockKey: Transaction] = [:]
        var segments = LogReader(fileSystem: fileSystem)
        defer { segments.close() }
        func make(_ plan: BlockPlan) -> Transaction? {
            switch plan {
            case .kept(let block), .transaction(let block):
                return block
            case let .logged(t, id, path, offset, size):
                guard let transaction = segments.transaction(t, id: id, path: path, offset: offset, size: size) else {
                    built.failed = true
                    return nil
                }
                return transaction
            case let .stored(level, index, lastID):
                let key = BlockKey(level: level, index: index)
                if let block = done[key] { return block }
                let size = blockSize(level)
                // A file that does not read back is left to the actor: it
                // may have written that name anew meanwhile.
                guard
                    let block = files?.read(
                        level: level,
                        first: index * size + 1,
                        last: (index + 1) * size,
                        lastID: lastID,
                        removingDamaged: false
                    )
                else {
                    built.unreadable.append(key)
                    return nil
                }
                built.blocks.append(Built.Block(key: key, block: block, temporary: nil, bytes: block._estimatedBytes))
                done[key] = block
                return block
            case let .built(level, index, lastID, parts):
                let key = BlockKey(level: level, index: index)
                if let block = done[key] { return block }
                var children: [Transaction] = []
                children.reserveCapacity(parts.count)
                for part in parts {
                    guard let child = make(part) else { return nil }
                    children.append(child)
                }
                guard var block = try? flatten(children) else {
                    built.failed = true
                    return nil
                }
                let size = blockSize(level)
                let (first, last) = (index * size + 1, (index + 1) * size)
                block.covers = []
                block.message = "transactions \(first)...\(last)"
                let temporary =
                    level >= persistedLevel
                    ? files?.writeTemporary(
                        block,
                        level: level,
                        first: first,
                        last: last,
                        lastID: lastID,
                        suffix: ".compaction.tmp"
                    ) : nil
                built.blocks.append(
                    Built.Block(key: key, block: block, temporary: temporary, bytes: block._estimatedBytes)
                )
                done[key] = block
                return block
            }
        }
        for plan in plans {
            if stopped() {
                built.failed = true
                break
            }
            _ = make(plan)
        }
        return built
    }

    /// Installs what ``build(_:files:fileSystem:generation:)`` made if the history is
    /// still the generation it was gathered from: keeps the blocks not kept
    /// yet and renames their temporaries into place, and removes the files
    /// that did not read back. Otherwise (the history was cut meanwhile)
    /// removes the temporaries. O(blocks); the renames are its only file
    /// work.
    /// - Returns: whether it was installed.
    mutating func install(_ built: Built) -> Bool {
        guard built.generation == generation else {
            for made in built.blocks { made.temporary.map { files?.discard($0) } }
            return false
        }
        for made in built.blocks {
            let (level, index) = (made.key.level, made.key.index)
            if blocks[level][index] == nil { keep(made.block, level: level, index: index, bytes: made.bytes) }
            if let temporary = made.temporary {
                files?.install(temporary, level: level, first: index * Self.blockSize(level) + 1)
            }
        }
        // Unless a rebuild on the actor has since replaced it with a good one.
        for key in built.unreadable where blocks[key.level][key.index] == nil {
            files?.remove(level: key.level, first: key.index * Self.blockSize(key.level) + 1)
        }
        return true
    }
}

/// Reads transactions from log segment files off the store's actor, each
/// file opened once: a record is checked (frame checksum, decoding, its t
/// and ID)
/// as the store checks it, and one that does not read back (damaged, or its
/// segment cut meanwhile) reads as nil.
private struct LogReader {
    let fileSystem: any FileSystem
    private var files: [String: any StorageFile] = [:]
    /// Descriptors held at most: a compaction from t 0 reads every segment
    /// of the log, and a log of many segments (snapshots seal them from
    /// 4 MiB) must not exhaust the process's descriptors. Reads go in t
    /// order, so past this the ones held are closed and reopened as needed.
    static let maximumOpen = 8

    init(fileSystem: any FileSystem) { self.fileSystem = fileSystem }

    mutating func transaction(_ t: Int64, id: UUID, path: String, offset: Int, size: Int) -> Transaction? {
        if files[path] == nil, files.count >= Self.maximumOpen { close() }
        guard let file = files[path] ?? (try? fileSystem.open(path, create: false)) else { return nil }
        files[path] = file
        guard let frame = try? file.read(at: offset, count: size), frame.count == size,
            let payload = LogFormat.payload(ofFrame: frame),
            let transaction = try? BinaryCodec.decodeTransaction(payload), transaction.t == t, transaction.id == id
        else { return nil }
        return transaction
    }

    mutating func close() {
        for file in files.values { file.close() }
        files = [:]
    }
}
