// The child process of the store's crash tests, killed by the test:
//
//   StrataCrashWriter <store> [everyCommit|grouped]
//       commits single-record transactions forever, printing each commit's
//       t on stdout once `transact` returned (so it is durable);
//   StrataCrashWriter <store> truncate <t> <n>
//       opens the store and truncates it after t, killing itself with
//       SIGKILL at the n-th change it makes to the disk (every step of the
//       truncate in turn); prints "truncated" if it gets through.
//   StrataCrashWriter <file> reencode
//       decodes the transaction encoded in <file> and writes its encoding,
//       made in this process (whose hash key orders its maps differently),
//       to <file>.out.
import Foundation
import Strata

@main
struct StrataCrashWriter {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2 else {
            FileHandle.standardError.write(Data("usage: StrataCrashWriter <store directory> [mode]\n".utf8))
            exit(2)
        }
        if arguments.count == 5, arguments[2] == "truncate", let t = Int64(arguments[3]), let n = Int(arguments[4]) {
            try await truncate(arguments[1], after: t, killingAt: n)
        } else if arguments.count == 3, arguments[2] == "reencode" {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: arguments[1])))
            let encoded = BinaryCodec.encode(try BinaryCodec.decodeTransaction(bytes))
            try Data(encoded).write(to: URL(fileURLWithPath: arguments[1] + ".out"))
        } else {
            try await commitForever(arguments[1], grouped: arguments.count >= 3 && arguments[2] == "grouped")
        }
    }

    static func commitForever(_ path: String, grouped: Bool) async throws {
        var options = StoreOptions()
        options.createIfMissing = true
        options.snapshotEveryTransactions = 25
        options.segmentSize = 4_096
        options.durability = grouped ? .grouped : .everyCommit
        let store = try await Store.open(at: path, options: options)
        while true {
            let next = store.current.basis + 1
            let report = try await store.transact(message: "write \(next)") { builder in
                let id = RecordID(Int(next))
                try builder.insert(
                    ["n": .int(next), "text": .string(String(repeating: "x", count: Int(next % 300)))],
                    id: id,
                    into: "items"
                )
                if next > 1, next % 3 == 0 {
                    try builder.update(RecordID(Int(next - 1)), in: "items", [.set("seen", .bool(true))])
                }
            }
            FileHandle.standardOutput.write(Data("\(report.transaction.t)\n".utf8))
        }
    }

    static func truncate(_ path: String, after t: Int64, killingAt n: Int) async throws {
        let fileSystem = KillingFileSystem()
        var options = StoreOptions()
        options.fileSystem = fileSystem
        options.rebuildBudget = nil
        options.snapshotEveryLogBytes = nil
        let store = try await Store.open(at: path, options: options)
        fileSystem.arm(killingAt: n)
        try await store.truncate(after: t)
        fileSystem.disarm()
        try await store.close()
        FileHandle.standardOutput.write(Data("truncated\n".utf8))
    }
}

/// The POSIX file system, killing the process with SIGKILL at the n-th
/// change to the disk once armed: the moment between two steps of an
/// operation, exactly.
final class KillingFileSystem: FileSystem, @unchecked Sendable {
    let base = PosixFileSystem()
    private let lock = NSLock()
    private var remaining = Int.max

    func arm(killingAt n: Int) { lock.withLock { remaining = n } }
    func disarm() { lock.withLock { remaining = .max } }

    /// Counts one change; the n-th never happens.
    func change() {
        let kill = lock.withLock {
            remaining -= 1
            return remaining <= 0
        }
        if kill { Foundation.kill(getpid(), SIGKILL) }
    }

    func open(_ path: String, create: Bool) throws -> any StorageFile {
        if create { change() }
        return KillingFile(try base.open(path, create: create), owner: self)
    }
    func contents(ofDirectory path: String) throws -> [String] { try base.contents(ofDirectory: path) }
    func createDirectory(_ path: String) throws { try base.createDirectory(path) }
    func remove(_ path: String) throws {
        change()
        try base.remove(path)
    }
    func rename(_ source: String, to destination: String) throws {
        change()
        try base.rename(source, to: destination)
    }
    func syncDirectory(_ path: String) throws {
        change()
        try base.syncDirectory(path)
    }
    func exists(_ path: String) -> Bool { base.exists(path) }
    func identity(of path: String) -> FileIdentity? { base.identity(of: path) }
    func lock(_ path: String) throws -> any StorageFile { try base.lock(path) }
    func lockDirectory(_ path: String) throws -> (any StorageFile)? { try base.lockDirectory(path) }
}

final class KillingFile: StorageFile {
    let base: any StorageFile
    let owner: KillingFileSystem

    init(_ base: any StorageFile, owner: KillingFileSystem) {
        self.base = base
        self.owner = owner
    }

    func size() throws -> Int { try base.size() }
    func read(at offset: Int, count: Int) throws -> [UInt8] { try base.read(at: offset, count: count) }
    func write(_ bytes: [UInt8], at offset: Int) throws {
        owner.change()
        try base.write(bytes, at: offset)
    }
    func sync() throws {
        owner.change()
        try base.sync()
    }
    func truncate(to size: Int) throws {
        owner.change()
        try base.truncate(to: size)
    }
    func preallocate(from offset: Int, to size: Int) -> Bool {
        owner.change()
        return base.preallocate(from: offset, to: size)
    }
    func close() { base.close() }
}
