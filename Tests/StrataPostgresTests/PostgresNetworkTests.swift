import Foundation
import Strata
import StrataPostgres
import Testing

/// A host of its own for a writer process: a network namespace joined to
/// this one by a veth pair on 10.231.n.0/24. Cutting the link takes this
/// side of the pair down, so the writer's packets vanish (no reset: its
/// connections are left half-open, as when a cable is pulled).
struct NetworkHost {
    static let ip =
        ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"].first {
            FileManager.default.isExecutableFile(atPath: $0)
        } ?? "/usr/sbin/ip"

    /// Whether namespaces can be made here: root on Linux with `ip`.
    static var available: Bool {
        #if os(Linux)
        return getuid() == 0 && FileManager.default.isExecutableFile(atPath: ip)
        #else
        return false
        #endif
    }

    let namespace: String
    let outside: String
    /// The server's address as the namespace reaches it.
    let gateway: String

    init(number: Int) throws {
        namespace = "strata-test-\(number)"
        outside = "stv\(number)h"
        let inside = "stv\(number)n"
        gateway = "10.231.\(number).1"
        // Left over from an interrupted run: gone first.
        Self.attempt(["netns", "del", namespace])
        try Self.run(["netns", "add", namespace])
        try Self.run(["link", "add", outside, "type", "veth", "peer", "name", inside])
        try Self.run(["link", "set", inside, "netns", namespace])
        try Self.run(["addr", "add", gateway + "/24", "dev", outside])
        try Self.run(["link", "set", outside, "up"])
        try Self.run(["netns", "exec", namespace, Self.ip, "addr", "add", "10.231.\(number).2/24", "dev", inside])
        try Self.run(["netns", "exec", namespace, Self.ip, "link", "set", inside, "up"])
        try Self.run(["netns", "exec", namespace, Self.ip, "link", "set", "lo", "up"])
    }

    func cut() throws { try Self.run(["link", "set", outside, "down"]) }
    func restore() throws { try Self.run(["link", "set", outside, "up"]) }

    /// Removes the namespace (and with it the pair).
    func remove() { Self.attempt(["netns", "del", namespace]) }

    /// Runs `ip` with `arguments`; the test fails when it does.
    static func run(_ arguments: [String]) throws {
        try #require(attempt(arguments) == 0, "ip \(arguments.joined(separator: " ")) failed")
    }

    /// Runs `ip` with `arguments`; its exit status, -1 when it could not
    /// run (tidying up may fail). Spawned and reaped directly, as the
    /// server's control script.
    @discardableResult
    static func attempt(_ arguments: [String]) -> Int32 {
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = ([ip] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        guard posix_spawn(&pid, ip, nil, nil, argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { return -1 }
        }
        return status & 0x7f == 0 ? (status >> 8) & 0xff : -1
    }
}

extension PostgresServerTests {
    @Suite("Peers on separate hosts")
    struct PostgresNetworkTests {
        typealias Processes = PostgresProcessTests

        @Test(
            "a writer on another host (a network namespace) loses its link mid-run and gets it back: nothing acknowledged lost",
            .enabled(if: NetworkHost.available, "network namespaces need root and ip (Linux)")
        )
        func cutLink() async throws {
            let control = try #require(ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_SERVER"])
            let url = try #require(ProcessInfo.processInfo.environment["STRATA_TEST_POSTGRES_URL"])
            let host = try NetworkHost(number: Int.random(in: 1...250))
            defer { host.remove() }
            // The server listens on the link too, then loopback only again.
            try Processes.run(control, "stop")
            try Processes.run(control, "start", host.gateway)
            defer {
                try? Processes.run(control, "stop")
                try? Processes.run(control, "start")
            }

            let storage = try await TestServer.newStore("netns")
            let directory = Processes.temporaryDirectory("netns")
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let stopFile = directory + "/stop"
            let remoteURL = url.replacingOccurrences(of: "127.0.0.1", with: host.gateway)
            let remote = try Processes.start(
                storage.store,
                writer: 0,
                count: 1_000_000,
                directory: directory,
                stopFile: stopFile,
                namespace: host.namespace,
                url: remoteURL
            )
            defer { if remote.process.isRunning { remote.process.terminate() } }
            // This host: a writer and a follower of its own.
            let local = try await Peer.open(try await TestServer.again(storage))
            let follower = try await Peer.open(try await TestServer.again(storage))
            await follower.startFollowing()

            try await Processes.waitFor(remote, acknowledging: 10)
            try host.cut()
            let before = remote.acknowledged().count
            // Commits go on here while the other host is cut off.
            for n in 0..<20 {
                try await local.transact {
                    try $0.insert(["n": .int(Int64(n))], id: RecordID(1_000_000 + n), into: "rows")
                }
            }
            try await Task.sleep(for: .seconds(4))
            let duringCut = remote.acknowledged().count
            try host.restore()
            try await Processes.waitFor(remote, acknowledging: duringCut + 10)
            _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
            try await Processes.finish(remote)

            // The cut was felt (at most the one commit in flight got through)
            // and waited out.
            #expect(duringCut <= before + 1, "the writer committed through a cut link")
            #expect(remote.messagesText().contains("trying again"), "\(remote.messagesText())")
            let stored = try await Processes.checkHistory(storage, acknowledged: remote.acknowledged())
            let rows = try await Peer.open(try await TestServer.again(storage)).current[table: "rows"]
            #expect(rows.count == stored.count)
            let clock = ContinuousClock()
            let patience = clock.now + .seconds(60)
            while follower.current.basis < Int64(stored.count), clock.now < patience {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(follower.current[table: "rows"] == rows)
            await follower.close()
        }
    }
}
