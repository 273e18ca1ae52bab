extension Peer {
    /// Applies what other writers store, as they store it: the peer listens
    /// to the storage's ``HistoryStorage/newTransactions()`` and catches up
    /// whenever the history passes ``current``. When the notifications end
    /// or a read fails (a lost connection), it reads what is new and
    /// listens again, waiting a little longer each time in a row (at most
    /// one second). Idempotent; stopped by ``close()``.
    public func startFollowing() {
        guard following == nil, !closed else { return }
        following = Task { [weak self] in
            var failures = 0
            while !Task.isCancelled, let peer = self {
                do {
                    try await peer.follow()
                    failures = 0
                } catch {
                    failures += 1
                }
                // The stream ended or a read failed: read again soon.
                let pause = min(1_000, 10 << min(failures, 7))
                try? await Task.sleep(for: .milliseconds(pause))
            }
        }
    }

    /// Catches up on every notification until the stream ends.
    private func follow() async throws {
        let stream = await storage.newTransactions()
        try await catchUp()
        for await newest in stream {
            if Task.isCancelled || closed { return }
            if newest > head.basis { try await catchUp() }
        }
    }
}
