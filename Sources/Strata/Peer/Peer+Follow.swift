extension Peer {
    /// Applies what other writers store, as they store it: the peer listens
    /// to the storage's ``HistoryStorage/newTransactions()`` and catches up
    /// whenever the history passes ``current``. When the notifications end
    /// or a read fails (a lost connection), it reads what is new and
    /// listens again, waiting a little longer each time in a row that
    /// brought nothing (at most one second). Besides, it asks for the
    /// newest number every ``pollInterval``, so that notifications lost
    /// without the stream ending (a half-open connection) delay a commit
    /// by that much at most. Idempotent; stopped by
    /// ``close()``. The task holds the peer only while it applies, so a
    /// peer no one else holds is freed.
    public func startFollowing() {
        guard following == nil, !closed else { return }
        let storage = self.storage
        // Notifications can stop without the stream ending (a connection
        // left half-open by a cut link): a slow poll bounds how stale the
        // peer can get, whatever the stream does.
        polling = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.pollInterval)
                guard !Task.isCancelled, let newest = try? await storage.latestT() else { continue }
                guard let peer = self else { return }
                try? await peer.catchUp(ifBefore: newest)
            }
        }
        following = Task { [weak self] in
            var failures = 0
            while !Task.isCancelled {
                let stream = await storage.newTransactions()
                var delivered = false
                do {
                    // `self` is held only for each call, never across the wait.
                    try await self?.catchUp()
                    if self == nil { return }
                    for await newest in stream {
                        guard let peer = self, !Task.isCancelled else { return }
                        delivered = true
                        try await peer.catchUp(ifBefore: newest)
                    }
                } catch {
                    delivered = false
                }
                // The stream ended or a read failed: listen again soon.
                failures = delivered ? 0 : failures + 1
                let pause = min(1_000, 10 << min(failures, 7))
                try? await Task.sleep(for: .milliseconds(pause))
            }
        }
    }

    /// Catches up when the history reaches past ``current``.
    func catchUp(ifBefore newest: Int64) async throws {
        if closed { return }
        if newest > head.basis { try await catchUp() }
    }
}

extension Peer {
    /// How often a following peer asks the storage for its newest number
    /// besides listening: 5 seconds.
    public static let pollInterval: Duration = .seconds(5)
}
