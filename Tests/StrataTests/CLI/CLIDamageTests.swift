import Foundation
import Strata
import Testing

/// What `strata` does with stores that are damaged, locked, empty, not
/// stores, or of a newer format: one line on standard error with the path
/// and what to do, and the documented exit status.
@Suite("strata: damaged, locked and foreign stores")
struct CLIDamageTests {
    /// Flips one byte of `file` at `offset`.
    static func flip(_ file: String, at offset: Int) throws {
        let handle = try #require(FileHandle(forUpdatingAtPath: file))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: Data([byte ^ 0x5A]))
    }

    static func bytes(of directory: String) -> [String: [UInt8]] {
        var contents: [String: [UInt8]] = [:]
        let enumerator = FileManager.default.enumerator(atPath: directory)
        while let name = enumerator?.nextObject() as? String {
            if let data = readFile(directory + "/" + name) { contents[name] = data }
        }
        return contents
    }

    @Test("a healthy store verifies sound, with every file counted")
    func healthy() async throws {
        let path = temporaryStorePath("cli-verify")
        defer { removeStore(path) }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let outcome = try await StrataRunner.run(["verify", path])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output.contains("sound: \(value.basis) transactions"), "\(outcome)")
        let json = try await StrataRunner.run(["verify", path, "--json"]).object()
        #expect(json["sound"] as? Bool == true)
        #expect(json["segments"] as? Int == logSegments(path).count)
        #expect(json["snapshots"] as? Int == snapshotFiles(path).count)
        #expect((json["problems"] as? [Any])?.isEmpty == true)
    }

    @Test(
        "a flipped byte in a sealed segment: verify names the file and offset; repair rebuilds the record from a later snapshot"
    )
    func flippedByteInTheLog() async throws {
        let path = temporaryStorePath("cli-flip")
        let repaired = temporaryStorePath("cli-repaired") + "/new"
        defer {
            removeStore(path)
            removeStore(repaired)
        }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let segments = logSegments(path)
        try #require(segments.count > 4)
        let damaged = segments[segments.count / 2]
        try Self.flip(damaged, at: 40)
        let before = Self.bytes(of: path)

        let verify = try await StrataRunner.run(["verify", path, "--json"])
        #expect(verify.status == 1, "\(verify)")
        let problems = try #require(try verify.object()["problems"] as? [[String: Any]])
        #expect(problems.contains { ($0["file"] as? String) == damaged }, "\(problems)")
        let text = try await StrataRunner.run(["verify", path])
        #expect(text.output.contains("damage  \(damaged) at offset"), "\(text)")
        #expect(text.error.contains("strata repair"), "\(text)")

        let repair = try await StrataRunner.run(["repair", path, "--into", repaired, "--json"])
        #expect(repair.status == 0, "whole again, one transaction rebuilt: \(repair)")
        let report = try repair.object()
        #expect(report["transactions"] as? Int == Int(value.basis), "\(report)")
        #expect((report["dropped"] as? [String])?.isEmpty == true, "\(report)")
        #expect((report["rebuilt"] as? [String])?.count == 1, "\(report)")
        #expect(Self.bytes(of: path) == before, "repair never modifies the original")

        let copy = try await Store.open(at: repaired)
        #expect(copy.current == value, "the copy holds the original's value")
        let original = try await StoreLog.open(at: path, recovery: .truncateAtDamage)
        for t in Int64(1)...value.basis {
            #expect(try await copy.transaction(at: t)?.id == original.summary(at: t).id, "IDs kept, t \(t)")
        }
        try await copy.close()
        #expect(try await StrataRunner.run(["verify", repaired]).status == 0)
        let again = try await StrataRunner.run(["repair", path, "--into", repaired])
        #expect(again.status == 2, "never into a store that holds something: \(again)")
        let inside = try await StrataRunner.run(["repair", path, "--into", path + "/copy"])
        #expect(inside.status == 2, "never into the store it reads: \(inside)")
        #expect(!FileManager.default.fileExists(atPath: path + "/copy"))
    }

    @Test("repair rebuilds a damaged transaction from a later snapshot and copies the history after it")
    func repairRebuildsFromASnapshot() async throws {
        let path = temporaryStorePath("cli-rebuild")
        let repaired = temporaryStorePath("cli-rebuilt") + "/new"
        defer {
            removeStore(path)
            removeStore(repaired)
        }
        try await StoreDirectoryEdgeTests.damagedEarly(path, damageNewestSnapshot: false)
        let verify = try await StrataRunner.run(["verify", path])
        #expect(verify.status == 1, "\(verify)")
        let repair = try await StrataRunner.run(["repair", path, "--into", repaired, "--json"])
        #expect(repair.status == 0, "\(repair)")
        let report = try repair.object()
        #expect(report["transactions"] as? Int == 60, "\(report)")
        #expect((report["dropped"] as? [String])?.isEmpty == true, "\(report)")
        let rebuilt = try #require(report["rebuilt"] as? [String])
        #expect(rebuilt.count == 1 && rebuilt[0].hasPrefix("t 2 rebuilt"), "\(rebuilt)")
        #expect(try await StrataRunner.run(["verify", repaired]).status == 0)

        let original = try await StoreLog.open(at: path, recovery: .truncateAtDamage)
        let copy = try await Store.open(at: repaired)
        #expect(copy.current.basis == 60 && copy.current.recordCount == 60)
        for t in Int64(1)...60 {
            let kept = try #require(try await copy.transaction(at: t))
            #expect(kept.id == original.summary(at: t).id && kept.message == "write \(t)", "t \(t)")
            if t != 2 { #expect(kept == (try original.transaction(at: t)), "t \(t) copied as it was") }
        }
        // The rebuilt transaction does what the damaged one did.
        let two = try await copy.database(asOf: 2)
        #expect(two.recordCount == 2 && two.record(2, in: "items")?["n"] == 2)
        try await copy.close()

        // Nothing to rebuild from: the damage past the last snapshot.
        let late = temporaryStorePath("cli-rebuild-late")
        let lateCopy = temporaryStorePath("cli-rebuilt-late") + "/new"
        defer {
            removeStore(late)
            removeStore(lateCopy)
        }
        let library = try await CLIFixtures.makeLibrary(at: late)
        var small = StoreOptions()
        small.segmentSize = 4_096
        let store = try await Store.open(at: late, options: small)
        for n in 1...120 {
            try await store.transact(message: "after the last snapshot \(n)") {
                try $0.insert(["n": .int(Int64(n))], id: RecordID(n), into: "later")
            }
        }
        try await store.close()
        // A sealed segment (known by its summary) wholly after the last snapshot.
        let log = try await StoreLog.open(at: late)
        let sealed = try #require(log.segments.dropLast().last)
        let sealedPath = late + "/log/" + sealed.name
        let first = try #require(Int64(sealed.name.dropLast(4)), "segments are named by their first record")
        #expect(first > library.basis)
        try Self.flip(sealedPath, at: 40)
        let partial = try await StrataRunner.run(["repair", late, "--into", lateCopy, "--json"])
        #expect(partial.status == 1, "\(partial)")
        let report2 = try partial.object()
        #expect(report2["transactions"] as? Int == Int(first - 1), "\(report2)")
        let dropped = try #require(report2["dropped"] as? [String])
        #expect(dropped.first?.contains("cannot be rebuilt: no snapshot at or after it") == true, "\(dropped)")
        let prefix = try await Store.open(at: lateCopy)
        #expect(prefix.current.basis == first - 1, "the sound prefix, copied")
        #expect(prefix.current[table: "later"].count == Int(first - 1 - library.basis))
        try await prefix.close()
    }

    @Test("a snapshot past damage in the log is a note (not compared), not damage of its own")
    func snapshotPastDamage() async throws {
        let path = temporaryStorePath("cli-past-damage")
        defer { removeStore(path) }
        _ = try await CLIFixtures.makeLibrary(at: path)
        let last = try #require(logSegments(path).last)
        // Inside the first record of the last segment (after its 24-byte
        // header and 8-byte frame header): the records after it are intact.
        try Self.flip(last, at: 40)
        let verify = try await StrataRunner.run(["verify", path, "--json"])
        #expect(verify.status == 1, "\(verify)")
        let report = try verify.object()
        let problems = try #require(report["problems"] as? [[String: Any]])
        let files = problems.compactMap { $0["file"] as? String }
        #expect(files.contains(last) && !files.contains { $0.contains("/snapshots/") }, "\(problems)")
        let notes = try #require(report["notes"] as? [String])
        #expect(notes.contains { $0.contains("lies past the damage") }, "\(notes)")
    }

    /// Found by a cold check of the command: repair said it dropped
    /// nothing and left a damaged snapshot unmentioned.
    @Test("repair names a damaged snapshot it did not copy; the copy is whole")
    func repairNamesADamagedSnapshot() async throws {
        let path = temporaryStorePath("cli-repair-snapshot")
        let repaired = temporaryStorePath("cli-repair-snapshot-copy") + "/new"
        defer {
            removeStore(path)
            removeStore(repaired)
        }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let snapshots = snapshotFiles(path)
        try #require(snapshots.count >= 3)
        // One damaged past its header, one in it (which open's header check already reports).
        let damaged = snapshots[snapshots.count - 2]
        let name = String(damaged.split(separator: "/").last!)
        try Self.flip(damaged, at: 100)
        let header = snapshots[snapshots.count - 3]
        let headerName = String(header.split(separator: "/").last!)
        try Self.flip(header, at: 20)
        let repair = try await StrataRunner.run(["repair", path, "--into", repaired, "--json"])
        #expect(repair.status == 0, "no history lost: \(repair)")
        let report = try repair.object()
        #expect((report["dropped"] as? [String])?.isEmpty == true, "\(report)")
        let notes = try #require(report["notes"] as? [String])
        #expect(notes.count == 2, "each damaged snapshot named once: \(notes)")
        #expect(notes.count { $0.contains(name) } == 1 && notes.count { $0.contains(headerName) } == 1, "\(notes)")
        #expect(notes.contains { $0.contains(name) && $0.contains("not copied") }, "\(notes)")
        let text = try await StrataRunner.run(["repair", path, "--into", repaired + "2"])
        defer { removeStore(repaired + "2") }
        #expect(text.output.contains("note") && text.output.contains(name), "\(text)")
        let copy = try await Store.open(at: repaired)
        #expect(copy.current == value)
        try await copy.close()
    }

    @Test("a truncated segment and a damaged snapshot are found; a missing snapshot is not damage")
    func truncatedAndMissing() async throws {
        let path = temporaryStorePath("cli-cut")
        defer { removeStore(path) }
        let value = try await CLIFixtures.makeLibrary(at: path)
        let snapshots = snapshotFiles(path)
        try #require(snapshots.count >= 2)
        try FileManager.default.removeItem(atPath: snapshots[0])
        let missing = try await StrataRunner.run(["verify", path])
        #expect(missing.status == 0, "the log is whole: \(missing)")
        let info = try await StrataRunner.run(["info", path, "--json"]).object()
        #expect(info["t"] as? Int == Int(value.basis))

        let newest = try #require(snapshots.last)
        try Self.flip(newest, at: 100)
        let snapshot = try await StrataRunner.run(["verify", path, "--json"])
        #expect(snapshot.status == 1)
        let problems = try #require(try snapshot.object()["problems"] as? [[String: Any]])
        #expect(problems.map { $0["file"] as? String } == [newest], "\(problems)")
        let reading = try await StrataRunner.run(["get", path, "songs", "1"])
        #expect(reading.status == 0, "reads fall back on the log: \(reading)")
        #expect(reading.error.contains("warning") && reading.error.contains("skipped snapshot"), "\(reading)")

        let segments = logSegments(path)
        let cut = segments[1]
        let size = try #require(try FileManager.default.attributesOfItem(atPath: cut)[.size] as? Int)
        let handle = try #require(FileHandle(forUpdatingAtPath: cut))
        try handle.truncate(atOffset: UInt64(size - 10))
        try handle.close()
        let verify = try await StrataRunner.run(["verify", path, "--json"])
        #expect(verify.status == 1, "\(verify)")
        let found = try #require(try verify.object()["problems"] as? [[String: Any]])
        #expect(found.contains { ($0["file"] as? String) == cut }, "\(found)")
        let log = try await StrataRunner.run(["log", path])
        #expect(log.status == 1, "\(log)")
        #expect(log.error.hasPrefix("strata: \(path): "), "\(log)")
        #expect(log.error.contains("strata verify"), "what to do: \(log)")
    }

    @Test("reading commands work while another process holds the store; writing ones exit 3")
    func lockedByAnotherProcess() async throws {
        let path = temporaryStorePath("cli-locked")
        defer { removeStore(path) }
        let child = try ChildProcess(path: StoreCrashTests.writerPath, arguments: [path, "grouped"])
        defer { child.killAndReap() }
        // Let it commit a while: segments of 4 KB roll over, snapshots are written.
        var t: Int64 = 0
        for _ in 0..<200 where t < 60 {
            try await Task.sleep(for: .milliseconds(10))
            if let log = try? await StoreLog.open(at: path) { t = log.count }
        }
        #expect(t >= 60, "the writer committed")
        for arguments in [["log", path, "--limit", "5"], ["info", path], ["export", path], ["show", path, "1"]] {
            let outcome = try await StrataRunner.run(arguments)
            #expect(outcome.status == 0, "\(arguments): \(outcome)")
        }
        let verify = try await StrataRunner.run(["verify", path])
        #expect(verify.status == 0, "a store being written verifies sound: \(verify)")
        for arguments in [
            ["snapshot", path], ["compact", path], ["revert", path, "1"], ["truncate", path, "--after", "1", "--yes"],
        ] {
            let outcome = try await StrataRunner.run(arguments)
            #expect(outcome.status == 3, "\(arguments): \(outcome)")
            #expect(outcome.error.contains("open for writing by another process"), "\(outcome)")
            #expect(outcome.error.split(separator: "\n").count == 1, "\(outcome)")
        }
    }

    @Test("not a store: a missing path, an empty directory, a file, another directory, a newer format (exit 4)")
    func notAStore() async throws {
        let directory = temporaryStorePath("cli-foreign")
        defer { removeStore(directory) }
        let file = directory + "/file.txt"
        try "hello".write(toFile: file, atomically: true, encoding: .utf8)
        let other = directory + "/other"
        try FileManager.default.createDirectory(atPath: other + "/stuff", withIntermediateDirectories: true)
        let empty = directory + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        for (path, words) in [
            (directory + "/missing", "no such store"), (empty, "empty"), (file, "is a file"), (other, "other files"),
        ] {
            for command in [["info"], ["log"], ["verify"], ["export"], ["snapshot"], ["repair"]] {
                let arguments = command + [path] + (command == ["repair"] ? ["--into", directory + "/x"] : [])
                let outcome = try await StrataRunner.run(arguments)
                #expect(outcome.status == 4, "\(arguments): \(outcome)")
                #expect(outcome.error.contains(words) && outcome.error.contains(path), "\(arguments): \(outcome)")
            }
        }
        let newer = directory + "/newer"
        _ = try await CLIFixtures.makeLibrary(at: newer)
        // The manifest of a later format: its version field (after the
        // 8-byte magic) raised, its checksum (the last 4 of 60 bytes) made good.
        let manifest = newer + "/manifest"
        var bytes = try #require(readFile(manifest))
        try #require(bytes.count == 60)
        bytes.replaceSubrange(8..<12, with: [99, 0, 0, 0])
        let checksum = CRC32C.checksum(Array(bytes[0..<56]))
        bytes.replaceSubrange(56..<60, with: withUnsafeBytes(of: checksum.littleEndian) { Array($0) })
        try Data(bytes).write(to: URL(fileURLWithPath: manifest))
        for command in [["info"], ["log"], ["verify"]] {
            let outcome = try await StrataRunner.run(command + [newer])
            #expect(outcome.status == 4, "\(command): \(outcome)")
            #expect(outcome.error.contains("newer"), "\(outcome)")
        }
        // A snapshot of a later format (its 64-byte header's version raised,
        // the checksum at 60 made good): verify must not call the store sound.
        let newerSnapshot = directory + "/newer-snapshot"
        _ = try await CLIFixtures.makeLibrary(at: newerSnapshot)
        let snapshots = try FileManager.default.contentsOfDirectory(atPath: newerSnapshot + "/snapshots")
            .filter { $0.hasSuffix(".strata") }.sorted()
        let snapshot = newerSnapshot + "/snapshots/" + (try #require(snapshots.last))
        var header = try #require(readFile(snapshot))
        header.replaceSubrange(8..<12, with: [9, 0, 0, 0])
        let headerChecksum = CRC32C.checksum(Array(header[0..<60]))
        header.replaceSubrange(60..<64, with: withUnsafeBytes(of: headerChecksum.littleEndian) { Array($0) })
        try Data(header).write(to: URL(fileURLWithPath: snapshot))
        for command in [["info"], ["verify"]] {
            let outcome = try await StrataRunner.run(command + [newerSnapshot])
            #expect(outcome.status == 4, "\(command): \(outcome)")
            #expect(
                outcome.error.contains("newer") && outcome.error.contains(snapshots.last!),
                "\(command): \(outcome)"
            )
        }
    }

    @Test("a missing manifest is damage to verify; repair of a rebuilt manifest or an empty store drops nothing")
    func manifest() async throws {
        let path = temporaryStorePath("cli-manifest")
        let repaired = temporaryStorePath("cli-manifest-repaired") + "/new"
        let empty = temporaryStorePath("cli-manifest-empty")
        defer {
            for store in [path, repaired, empty] { removeStore(store) }
        }
        let value = try await CLIFixtures.makeLibrary(at: path)
        try Self.flip(path + "/manifest", at: 20)
        // Only the manifest is damaged: the whole history is copied, and
        // the rebuilt manifest is a note, not a loss.
        let repair = try await StrataRunner.run(["repair", path, "--into", repaired])
        #expect(repair.status == 0, "\(repair)")
        #expect(repair.output.contains("copied \(value.basis) transactions (t 1…\(value.basis))"), "\(repair)")
        #expect(repair.output.contains("dropped nothing") && repair.output.contains("note"), "\(repair)")
        try FileManager.default.removeItem(atPath: repaired)
        let json = try await StrataRunner.run(["repair", path, "--into", repaired, "--json"])
        #expect(json.status == 0, "\(json)")
        #expect((try json.object()["dropped"] as? [String])?.isEmpty == true, "\(json)")
        #expect((try json.object()["notes"] as? [String])?.isEmpty == false, "\(json)")

        // Without its manifest, a log cut after its last durable
        // transaction cannot be told from a whole one: verify says so.
        try FileManager.default.removeItem(atPath: path + "/manifest")
        let verify = try await StrataRunner.run(["verify", path, "--json"])
        #expect(verify.status == 1, "\(verify)")
        let problems = try #require(try verify.object()["problems"] as? [[String: Any]])
        #expect(problems.map { $0["file"] as? String } == [path + "/manifest"], "\(problems)")
        #expect(try await StrataRunner.run(["info", path]).status == 0, "a store from before manifests still opens")

        var options = StoreOptions()
        options.createIfMissing = true
        let store = try await Store.open(at: empty, options: options)
        try await store.close()
        #expect(try await StrataRunner.run(["verify", empty]).status == 0)
        try FileManager.default.removeItem(atPath: repaired)
        let nothing = try await StrataRunner.run(["repair", empty, "--into", repaired])
        #expect(nothing.status == 0, "\(nothing)")
        #expect(nothing.output.contains("copied 0 transactions into") && !nothing.output.contains("t 1…"), "\(nothing)")
    }

    @Test("verify tells a partial last record from a whole one whose checksum fails; a closed store's loss is damage")
    func lastRecord() async throws {
        let path = temporaryStorePath("cli-last-record")
        defer { removeStore(path) }
        _ = try await CLIFixtures.makeLibrary(at: path)
        let last = try #require(logSegments(path).last)
        var bytes = try #require(readFile(last))
        // Frames after the 24-byte header: a 4-byte length, a 4-byte
        // checksum, the payload; zeros after the last one are reserved space.
        var offset = 24
        var lastFrame = offset
        while offset + 8 <= bytes.count {
            let length = bytes[offset..<offset + 4].reversed().reduce(0) { $0 << 8 | Int($1) }
            guard length > 0, offset + 8 + length <= bytes.count else { break }
            lastFrame = offset
            offset += 8 + length
        }
        try #require(lastFrame > 24)
        let end = offset
        bytes.removeSubrange(end...)
        // The last frame whole, one payload byte changed.
        var flipped = bytes
        flipped[end - 1] ^= 0x5A
        try Data(flipped).write(to: URL(fileURLWithPath: last))
        let whole = try await StrataRunner.run(["verify", path, "--json"])
        // The store was closed: its manifest says the last transaction
        // was durable, so losing it is damage whatever the frame looks like.
        #expect(whole.status == 1, "\(whole)")
        let problems = try #require(try whole.object()["problems"] as? [[String: Any]])
        #expect(problems.contains { ($0["reason"] as? String)?.contains("durable through") == true }, "\(problems)")
        let wholeNotes = try #require(try whole.object()["notes"] as? [String])
        #expect(wholeNotes.contains { $0.contains("a last record whose checksum fails") }, "\(wholeNotes)")
        // Zeros after the last frame, and a segment header cut short.
        try Data(bytes + [UInt8](repeating: 0, count: 100)).write(to: URL(fileURLWithPath: last))
        let zeros = try #require(try await StrataRunner.run(["verify", path, "--json"]).object()["notes"] as? [String])
        #expect(zeros.contains { $0.contains("100 zero bytes after the last record") }, "\(zeros)")
        let next = path + "/log/00000000000000099999.log"
        try Data([UInt8](repeating: 0, count: 12)).write(to: URL(fileURLWithPath: next))
        let header = try #require(
            try await StrataRunner.run(["verify", path, "--json"]).object()["notes"] as? [String]
        )
        #expect(header.contains { $0.contains("a segment header cut short (12 bytes") }, "\(header)")
        try FileManager.default.removeItem(atPath: next)
        // The last frame cut short.
        try Data(bytes[..<(end - 3)]).write(to: URL(fileURLWithPath: last))
        let partial = try await StrataRunner.run(["verify", path, "--json"])
        #expect(partial.status == 1, "\(partial)")
        let partialNotes = try #require(try partial.object()["notes"] as? [String])
        #expect(partialNotes.contains { $0.contains("a partial last record") }, "\(partialNotes)")
    }

    @Test("with --json, every failure is also one JSON object on standard output: its message and exit status")
    func jsonErrors() async throws {
        let directory = temporaryStorePath("cli-json-errors")
        defer { removeStore(directory) }
        let empty = directory + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let store = directory + "/store"
        _ = try await CLIFixtures.makeLibrary(at: store)
        for (arguments, status, words) in [
            (["info", directory + "/missing", "--json"], 4, "no such store"),
            (["log", empty, "--json"], 4, "--create"),
            (["log", store, "--limit", "-1", "--json"], 2, "--limit must be 0 or more"),
            (["get", store, "songs", "--json"], 2, "Missing"),
            (["show", store, "99999", "--json"], 2, "99999"),
            (["get", store, "songs", "999999", "--json"], 1, "999999"),
            (["import", store, directory + "/none.jsonl", "--json"], 1, "none.jsonl"),
        ] {
            let outcome = try await StrataRunner.run(arguments)
            #expect(outcome.status == Int32(status), "\(arguments): \(outcome)")
            #expect(outcome.error.contains(words), "\(arguments): \(outcome)")
            let object = try outcome.object()
            #expect(object["status"] as? Int == status, "\(arguments): \(outcome)")
            #expect((object["error"] as? String)?.contains(words) == true, "\(arguments): \(outcome)")
            #expect(!(object["error"] as? String ?? "").contains("createIfMissing"), "\(arguments): \(outcome)")
        }
        // A JSON export with a record it cannot write is refused before
        // any output (a fragment of a document was left before): the
        // error's object alone.
        let clash = directory + "/clash.jsonl"
        try #"{"id":1,"$id":5,"x":1}"#.write(toFile: clash, atomically: true, encoding: .utf8)
        let imported = try await StrataRunner.run(["import", store, clash, "--table", "clash", "--id-field", "id"])
        #expect(imported.status == 0, "\(imported)")
        let export = try await StrataRunner.run(["export", store, "--format", "json", "--json"])
        #expect(export.status == 1 && export.error.contains("$id"), "\(export)")
        #expect((try export.object()["error"] as? String)?.contains("$id") == true, "\(export)")
        // Refused before any output: the error's object alone.
        let alone = try await StrataRunner.run(["export", store, "--table", "clash", "--json"])
        let aloneError = try alone.object()["error"] as? String
        #expect(alone.status == 1 && aloneError?.contains("$id") == true, "\(alone)")
        // Without --json, standard output stays empty.
        let plain = try await StrataRunner.run(["info", directory + "/missing"])
        #expect(plain.status == 4 && plain.output.isEmpty, "\(plain)")
        // A `--json` after `--` is an argument, not the flag.
        let argument = try await StrataRunner.run(["get", store, "songs", "--", "--json"])
        #expect(argument.status == 1 && argument.output.isEmpty, "\(argument)")
    }

    @Test("usage errors exit 2 with the usage; help exits 0")
    func usage() async throws {
        for arguments in [
            ["frobnicate"], ["log"], ["log", "/x", "--limit", "-1"], ["get", "/x", "songs"],
            ["log", "/x", "--record", "1"],
        ] {
            let outcome = try await StrataRunner.run(arguments)
            #expect(outcome.status == 2, "\(arguments): \(outcome)")
            #expect(!outcome.error.isEmpty)
            #expect(!outcome.error.contains("Missing value"), "a negative number is a value: \(outcome)")
        }
        let help = try await StrataRunner.run(["--help"])
        #expect(help.status == 0)
        #expect(help.output.contains("verify") && help.output.contains("Exit status"), "\(help)")
        #expect(try await StrataRunner.run(["log", "--help"]).status == 0)
    }
}
