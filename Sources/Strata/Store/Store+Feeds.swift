import Foundation

extension Store {
    /// Each new durable value, in commit order, from now until the store
    /// closes or the consumer stops iterating; after a
    /// ``truncate(after:)``, the value it leaves (an older basis than the
    /// one before it).
    ///
    /// Every value is kept until the consumer takes it: one that falls
    /// behind holds each value it has not read (their unshared paths).
    /// A consumer that wants the latest value only reads ``current`` or
    /// observes with ``ObservationBuffering/newest``.
    public func values() -> AsyncStream<Database> {
        let (stream, continuation) = AsyncStream<Database>.makeStream(bufferingPolicy: .unbounded)
        let key = UUID()
        valueFeeds[key] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.removeValueFeed(key) } }
        if log == nil { continuation.finish() }
        return stream
    }

    /// A report (the transaction and its change set) for each new durable
    /// commit, in order, from now until the store closes. Every report is
    /// kept until the consumer takes it, as for ``values()``.
    public func reports() -> AsyncStream<CommitReport> {
        let (stream, continuation) = AsyncStream<CommitReport>.makeStream(bufferingPolicy: .unbounded)
        let key = UUID()
        reportFeeds[key] = continuation
        continuation.onTermination = { [weak self] _ in Task { await self?.removeReportFeed(key) } }
        if log == nil { continuation.finish() }
        return stream
    }

    private func removeValueFeed(_ key: UUID) { valueFeeds[key] = nil }
    private func removeReportFeed(_ key: UUID) { reportFeeds[key] = nil }
}
