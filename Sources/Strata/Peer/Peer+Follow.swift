import Foundation

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
    /// ``close()``, and by a closed storage (the peer closes). Each time it
    /// listens it checks that the storage still holds the peer's newest
    /// transaction: a history cut under it (a file store's
    /// `truncate(after:)`) stops the peer, whose commits then throw
    /// ``PeerError/divergentHistory(t:reason:)``. The task holds the peer
    /// only while it applies, so a peer no one else holds is freed.
    public func startFollowing() {
        guard following == nil, !closed else { return }
        // Until the follow task listens, a commit or catch-up still checks
        // for a cut, as one that is not following does.
        setListeningLost()
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
                    // Whatever runs first (this catch-up, the poll's, a
                    // commit) checks the history was not cut meanwhile.
                    await self?.setListeningLost()
                    try await self?.catchUp()
                    if self == nil { return }
                    for await newest in stream {
                        guard let peer = self, !Task.isCancelled else { return }
                        delivered = true
                        try await peer.catchUp(ifBefore: newest)
                    }
                } catch let error as PeerError {
                    if case .divergentHistory = error {
                        await self?.diverged(error)
                        return
                    }
                    delivered = false
                } catch {
                    delivered = false
                }
                // Until this peer listens again, the history could be cut
                // under it: whatever applies or commits first checks.
                await self?.setListeningLost()
                // A closed storage answers nothing any more: the peer closes.
                if await storage.isClosed() {
                    await self?.close()
                    return
                }
                // The stream ended or a read failed: listen again soon.
                failures = delivered ? 0 : failures + 1
                let pause = min(1_000, 10 << min(failures, 7))
                try? await Task.sleep(for: .milliseconds(pause))
            }
        }
    }

    /// Checks that the storage still holds this peer's newest transaction
    /// (a file store cut with `truncate(after:)` and grown again holds
    /// others at the same numbers). O(1) requests.
    /// - Throws: ``PeerError/divergentHistory(t:reason:)`` when it does not.
    func checkContinuity() async throws {
        let newest: (id: UUID, t: Int64)? = summaries.last.map { ($0.id, $0.t) } ?? start.id.map { ($0, start.basis) }
        guard let last = newest, last.t == head.basis, last.t > 0 else { return }
        let stored = try await storage.transactionID(at: last.t)
        guard stored != last.id, head.basis == last.t else { return }
        throw PeerError.historyCut(at: last.t, holding: stored)
    }

    func setListeningLost() {
        listeningLost = true
        listeningLostCount += 1
    }

    /// Throws the divergence found before, or checks continuity when the
    /// notifications were lost since the last check (and stops the peer
    /// when the history differs).
    func checkContinuityIfListeningLost() async throws {
        if let divergence { throw divergence }
        // Not following: no notification tells of a cut, so check each
        // time, on a storage that can be cut.
        guard listeningLost || (following == nil && storage.canCutHistory) else { return }
        let seen = listeningLostCount
        do {
            try await checkContinuity()
        } catch let error as PeerError {
            diverged(error)
            throw error
        }
        // Notifications lost again during the check need another.
        if listeningLostCount == seen { listeningLost = false }
    }

    /// Stops for good after the storage's history turned out to differ:
    /// commits and catch-ups throw `error` from now on.
    func diverged(_ error: PeerError) {
        divergence = error
        close()
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
