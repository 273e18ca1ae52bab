import Foundation

extension FileCheck {
    /// What a block file held when it was read ahead of the replay.
    enum BlockRead: Sendable {
        /// Not read: the log's replay, or the check, ended first (the
        /// block is then read where it is checked).
        case skipped
        /// Read: the last transaction ID its header names, when it reads
        /// as its block but for that ID (nil: it does not, or it could not
        /// be read).
        case read(lastID: UUID?)
    }

    /// Starts reading and checking every block file listed, after the
    /// snapshots are summed, on the same thread: at a million records a
    /// block is tens of megabytes to decompress, which once took one core
    /// at the very end of the check while the other idled. What only the
    /// log can tell (the ID of the block's last transaction) is compared
    /// when the replay has read it (`checkBlocks()`).
    mutating func startReadingBlocks() {
        guard let names = try? fileSystem.contents(ofDirectory: blockDirectory) else { return }
        let (summer, fileSystem, directory) = (self.summer, self.fileSystem, blockDirectory)
        for name in names {
            guard let (level, first) = BlockFile.parse(name) else { continue }
            let last = first + RunIndex.blockSize(level) - 1
            blockReads[name] = Eventual(on: summer.queue) {
                if summer.hasPassed(.max) { return .skipped }
                return .read(lastID: Self.soundLastID(directory + "/" + name, level, first, last, fileSystem))
            }
        }
    }

    /// Blocks are a cache of the log: each is checked for its header and
    /// checksums (and the zstd frame's), not decoded.
    mutating func checkBlocks() throws {
        let names: [String]
        do {
            names = try fileSystem.contents(ofDirectory: blockDirectory)
        } catch {
            // A cache: what cannot be listed is rebuilt, not lost.
            guard fileSystem.exists(blockDirectory) else { return }
            report.notes.append(
                "\(blockDirectory): the compaction blocks cannot be read (\(error)); a cache of the log"
            )
            return
        }
        for name in names {
            let file = blockDirectory + "/" + name
            guard let (level, first) = BlockFile.parse(name) else {
                if name.hasSuffix(".tmp") { report.notes.append("\(file): a block being written, or cut short") }
                continue
            }
            let last = first + RunIndex.blockSize(level) - 1
            let readAhead = blockReads.removeValue(forKey: name)
            guard fileSystem.exists(file) else { continue }
            report.blocks += 1
            report.bytes += (try? fileSystem.openForReading(file)).flatMap { try? $0.size() } ?? 0
            guard first >= 1, last <= Int64(ids.count) else {
                report.notes.append("\(file): a block of a history since cut; the next open removes it")
                continue
            }
            let lastID = ids[Int(last - 1)]
            let found: UUID?
            if case .read(let read)? = readAhead?.take() {
                found = read
            } else {
                found = Self.soundLastID(file, level, first, last, fileSystem)
            }
            if found != lastID, fileSystem.exists(file) {
                // A cache of the log, not the record: `compact` (or the next as-of needing it) rebuilds it.
                report.notes.append(
                    "\(file): a compaction block that does not check (a cache of the log: "
                        + "`strata compact` rebuilds it)"
                )
            }
        }
    }

    /// The last transaction ID the block file at `file` names when it reads
    /// as the block of `level` from `first` to `last` but for that ID
    /// (``BlockFile/soundLastID(_:level:first:last:)``); nil when it does
    /// not, or cannot be read.
    private static func soundLastID(
        _ file: String,
        _ level: Int,
        _ first: Int64,
        _ last: Int64,
        _ fileSystem: any FileSystem
    ) -> UUID? {
        (try? fileSystem.readWholeFile(file)).flatMap {
            BlockFile.soundLastID($0, level: level, first: first, last: last)
        }
    }
}
