/// What an observation does when its consumer falls behind.
public enum ObservationBuffering: Hashable, Sendable {
    /// Every changed result is kept until read: the consumer sees one
    /// result per commit that changed it, in commit order. The default.
    case everyChange
    /// Only the newest result is kept: a consumer that falls behind skips
    /// to the latest, never sees a result twice in a row, and never holds
    /// more than one result in memory.
    case newest
}

/// The results of an observed closure: the result on the value current
/// when observation began, then a result each time a published value
/// changes it, in commit order (see ``Store/observe(buffering:_:)``).
///
/// Ends when the store closes, when the closure throws (the error is
/// rethrown here), or when the task iterating it is cancelled; ending
/// frees the observer in the store.
public struct Observation<Element: Equatable & Sendable>: AsyncSequence, Sendable {
    /// The errors the closure may throw.
    public typealias Failure = any Error

    let stream: AsyncThrowingStream<Element, any Error>
    let buffering: ObservationBuffering

    /// An iterator over the results.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: stream.makeAsyncIterator(), deduplicates: buffering == .newest)
    }

    /// Iterates the results; each call to `next()` waits for the next one.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<Element, any Error>.AsyncIterator
        let deduplicates: Bool
        var last: Element?

        /// The next result, or nil once the observation has ended.
        /// - Throws: what the observed closure threw.
        public mutating func next() async throws -> Element? {
            while let element = try await base.next() {
                // Skipping to the newest can land on a result equal to the
                // last one read (a change and its revert).
                guard deduplicates else { return element }
                if element != last {
                    last = element
                    return element
                }
            }
            return nil
        }
    }
}

/// One observation's producing side: the closure, the last result it
/// yielded and the stream's continuation. Runs on the store's actor.
final class Observer<Result: Equatable & Sendable>: ObserverRunning {
    let body: @Sendable (Database) throws -> Result
    let continuation: AsyncThrowingStream<Result, any Error>.Continuation
    var last: Result?

    init(
        _ body: @escaping @Sendable (Database) throws -> Result,
        continuation: AsyncThrowingStream<Result, any Error>.Continuation
    ) {
        self.body = body
        self.continuation = continuation
    }

    func run(on database: Database) -> ReadSet? {
        let recorder = ReadRecorder()
        var observed = database
        observed._reads = recorder
        let result: Result
        do {
            result = try body(observed)
        } catch {
            _ = recorder.finish()
            continuation.finish(throwing: error)
            return nil
        }
        let reads = recorder.finish()
        if result != last {
            last = result
            if case .terminated = continuation.yield(result) { return nil }
        }
        return reads
    }

    func finish() { continuation.finish() }
}
