import ArgumentParser
import Foundation
import Strata

struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "The store at a glance: t, tables and indexes, files, estimated open time."
    )

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let console = Console()
        let store = try await common.openReading(console)
        let value = store.current
        let statistics = await store.statistics
        let last = try await common.failing { try await store.transaction(at: value.basis) }
        let files = StoreFiles(path: common.path)
        try await store.close()

        if common.json {
            let tables: [JSON] = value.tableNames.map { name in
                let table = value[table: name]
                return .object([
                    ("name", .string(name.string)),
                    ("records", .int(table.count)),
                    (
                        "indexes",
                        .array(
                            table.indexes.map { index in
                                .object([
                                    ("name", .string(index.definition.name.string)),
                                    ("fields", .array(index.definition.fields.map { .string("\($0)") })),
                                    ("unique", .bool(index.definition.isUnique)),
                                ])
                            }
                        )
                    ),
                ])
            }
            console.json(
                .object([
                    ("path", .string(common.path)),
                    ("t", .int(value.basis)),
                    ("lastCommit", last.map { JSON.time($0.timestamp) } ?? .null),
                    ("records", .int(value.recordCount)),
                    ("tables", .array(tables)),
                    ("log", files.json(files.segments)),
                    ("summaries", files.json(files.summaries)),
                    ("snapshots", files.json(files.snapshots)),
                    ("blocks", files.json(files.blocks)),
                    ("snapshotBases", .array(files.snapshotBases.map { .int($0) })),
                    (
                        "estimatedOpenMilliseconds",
                        .double(
                            Double(statistics.estimatedOpen.components.seconds) * 1e3 + Double(
                                statistics.estimatedOpen.components.attoseconds
                            ) / 1e15
                        )
                    ),
                ])
            )
            return
        }
        let lastText = last.map { " (last commit \(Text.time($0.timestamp)) UTC)" } ?? " (empty)"
        console.line("\(console.styled("store", .bold))  \(common.path)")
        console.line("t          \(Text.count(value.basis))\(lastText)")
        console.line("records    \(Text.count(value.recordCount)) in \(Text.count(value.tableNames.count, "table"))")
        if !value.tableNames.isEmpty {
            var table = TextTable([("table", .left), ("records", .right), ("indexes", .left)])
            for name in value.tableNames {
                let indexes = value[table: name].indexes.map { index in
                    let fields = index.definition.fields.map { "\($0)" }.joined(separator: ", ")
                    return "\(index.definition.name) (\(fields))\(index.definition.isUnique ? " unique" : "")"
                }
                table.add([
                    Text.safe(name.string), Text.count(value[table: name].count),
                    indexes.isEmpty ? "-" : Text.safe(indexes.joined(separator: "; ")),
                ])
            }
            for line in table.lines(console) { console.line("  " + line) }
        }
        var filesTable = TextTable([("files", .left), ("count", .right), ("bytes", .right)])
        for (label, list) in [
            ("log segments", files.segments), ("segment summaries", files.summaries),
            ("snapshots", files.snapshots), ("compaction blocks", files.blocks),
        ] {
            filesTable.add([label, Text.count(list.count), Text.bytes(list.reduce(0) { $0 + $1.bytes })])
        }
        for line in filesTable.lines(console) { console.line("  " + line) }
        let bases = files.snapshotBases.map { Text.count($0) }.joined(separator: ", ")
        if !bases.isEmpty { console.line("snapshots at t  \(bases)") }
        console.line("open       ~\(Text.duration(statistics.estimatedOpen)) estimated")
    }
}

/// The files of a store directory, by kind, with their sizes.
struct StoreFiles {
    typealias File = (name: String, bytes: Int)
    var segments: [File] = []
    var summaries: [File] = []
    var snapshots: [File] = []
    var blocks: [File] = []

    init(path: String) {
        func list(_ directory: String, _ keep: (String) -> Bool) -> [File] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
            return names.filter(keep).sorted().map { name in
                let attributes = try? FileManager.default.attributesOfItem(atPath: directory + "/" + name)
                return (name, (attributes?[.size] as? NSNumber)?.intValue ?? 0)
            }
        }
        segments = list(path + "/log") { $0.hasSuffix(".log") }
        summaries = list(path + "/log") { $0.hasSuffix(".summary") }
        snapshots = list(path + "/snapshots") { $0.hasPrefix("snapshot-") && $0.hasSuffix(".strata") }
        blocks = list(path + "/blocks") { $0.hasPrefix("block-") && $0.hasSuffix(".strata") }
    }

    /// The t of each snapshot file, oldest first.
    var snapshotBases: [Int64] {
        snapshots.compactMap { Int64($0.name.dropFirst("snapshot-".count).dropLast(".strata".count)) }
    }

    func json(_ files: [File]) -> JSON {
        .object([("count", .int(files.count)), ("bytes", .int(files.reduce(0) { $0 + $1.bytes }))])
    }
}
