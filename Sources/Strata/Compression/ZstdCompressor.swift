import CZstd

/// Compresses bytes into zstd frames, reusing one compression context and
/// one staging buffer across calls.
///
/// Every frame carries its content size (one-shot) and a content checksum,
/// so ``ZstdDecompressor`` can verify both. A compressor is not thread-safe:
/// use one per thread or task; creating one costs a context allocation
/// (a few hundred KiB at level 3), which is why it is meant to be kept.
///
///     let compressor = try ZstdCompressor(level: 3)
///     let frame = try compressor.compress(bytes)
///
/// For data produced piecemeal, stream it into one frame:
///
///     try compressor.beginStream(pledgedSize: nil)
///     for chunk in chunks { try compressor.feed(chunk, into: &frame) }
///     try compressor.finishStream(into: &frame)
public final class ZstdCompressor {
    /// The compression level (zstd accepts 1...22; negative levels trade
    /// ratio for speed).
    public let level: Int32

    private let context: OpaquePointer
    private var staging: [UInt8]
    private var streaming = false

    /// The levels zstd accepts on this machine.
    public static var levels: ClosedRange<Int32> { ZSTD_minCLevel()...ZSTD_maxCLevel() }

    /// Creates a compressor at `level` (default 3, zstd's default) with
    /// frame checksums on.
    ///
    /// - Throws: `CompressionError.compressionFailed` for a level outside
    ///   ``levels`` or when the context cannot be allocated.
    public init(level: Int32 = 3) throws {
        guard Self.levels.contains(level) else {
            throw CompressionError.compressionFailed(reason: "level \(level) is outside \(Self.levels)")
        }
        guard let context = ZSTD_createCCtx() else {
            throw CompressionError.compressionFailed(reason: "cannot allocate a compression context")
        }
        self.context = context
        self.level = level
        self.staging = []
        do {
            try Self.check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level))
            try Self.check(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1))
            try Self.check(ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1))
        } catch {
            ZSTD_freeCCtx(context)
            throw error
        }
    }

    deinit {
        ZSTD_freeCCtx(context)
    }

    /// Compresses `input` into one self-contained frame. O(n).
    public func compress(_ input: UnsafeRawBufferPointer) throws -> [UInt8] {
        guard !streaming else { throw CompressionError.streamMisuse("compress called during a stream") }
        let bound = ZSTD_compressBound(input.count)
        try Self.check(bound)
        try Self.check(ZSTD_CCtx_reset(context, ZSTD_reset_session_only))
        // Written in place, not zeroed first: zeroing the bound touched
        // every page of it (a snapshot's chunks spent a third of their
        // compression in page faults), where the frame fills a fraction.
        var result = 0
        let frame = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            result = ZSTD_compress2(context, buffer.baseAddress, buffer.count, input.baseAddress, input.count)
            count = ZSTD_isError(result) != 0 ? 0 : result
        }
        try Self.check(result)
        // Often a fifth of the bound: an exact copy lets the rest go.
        return frame.count < bound / 2 ? frame.withUnsafeBytes { [UInt8]($0) } : frame
    }

    /// Compresses `input` into one frame that replaces the contents of
    /// `output`, reusing its capacity: repeated calls with the same buffer
    /// avoid a fresh allocation (and its page faults) each time. O(n).
    public func compress(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) throws {
        guard !streaming else { throw CompressionError.streamMisuse("compress called during a stream") }
        let bound = ZSTD_compressBound(input.count)
        try Self.check(bound)
        try Self.check(ZSTD_CCtx_reset(context, ZSTD_reset_session_only))
        output.resize(to: bound)
        let written = output.withUnsafeMutableBytes { buffer in
            ZSTD_compress2(context, buffer.baseAddress, buffer.count, input.baseAddress, input.count)
        }
        if ZSTD_isError(written) != 0 {
            output.removeAll(keepingCapacity: true)
            try Self.check(written)
        }
        output.resize(to: written)
    }

    /// Compresses `input` into one self-contained frame. O(n).
    public func compress(_ input: some Sequence<UInt8>) throws -> [UInt8] {
        if let result = try input.withContiguousStorageIfAvailable({ try compress(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try Array(input).withUnsafeBytes { try compress($0) }
    }

    /// Starts a streamed frame. When `pledgedSize` is given the frame header
    /// records it and ``finishStream(into:)`` fails if a different number of
    /// bytes was fed.
    public func beginStream(pledgedSize: Int? = nil) throws {
        guard !streaming else { throw CompressionError.streamMisuse("beginStream called during a stream") }
        try Self.check(ZSTD_CCtx_reset(context, ZSTD_reset_session_only))
        if let pledgedSize {
            try Self.check(ZSTD_CCtx_setPledgedSrcSize(context, UInt64(pledgedSize)))
        }
        if staging.isEmpty {
            staging = [UInt8](repeating: 0, count: ZSTD_CStreamOutSize())
        }
        streaming = true
    }

    /// Compresses `input` as the next part of the current stream, appending
    /// whatever compressed bytes are ready to `output`.
    public func feed(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) throws {
        guard streaming else { throw CompressionError.streamMisuse("feed called before beginStream") }
        var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        do {
            while source.pos < source.size {
                _ = try drive(&source, mode: ZSTD_e_continue, into: &output)
            }
        } catch {
            cancelStream()
            throw error
        }
    }

    /// Compresses `input` as the next part of the current stream.
    public func feed(_ input: some Sequence<UInt8>, into output: inout [UInt8]) throws {
        let done: Void? = try input.withContiguousStorageIfAvailable {
            try feed(UnsafeRawBufferPointer($0), into: &output)
        }
        if done == nil {
            try Array(input).withUnsafeBytes { try feed($0, into: &output) }
        }
    }

    /// Ends the current stream's frame (writing its checksum), appending the
    /// last compressed bytes to `output`.
    public func finishStream(into output: inout [UInt8]) throws {
        guard streaming else { throw CompressionError.streamMisuse("finishStream called before beginStream") }
        defer { cancelStream() }
        var source = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
        while try drive(&source, mode: ZSTD_e_end, into: &output) != 0 {}
    }

    /// Abandons the current stream, if any; the next call starts afresh.
    public func cancelStream() {
        streaming = false
        ZSTD_CCtx_reset(context, ZSTD_reset_session_only)
    }

    /// One call of ZSTD_compressStream2 through the staging buffer; returns
    /// zstd's "bytes still to flush" hint.
    private func drive(_ source: inout ZSTD_inBuffer, mode: ZSTD_EndDirective, into output: inout [UInt8]) throws -> Int
    {
        var remaining = 0
        var produced = 0
        try staging.withUnsafeMutableBytes { buffer in
            var sink = ZSTD_outBuffer(dst: buffer.baseAddress, size: buffer.count, pos: 0)
            remaining = ZSTD_compressStream2(context, &sink, &source, mode)
            try Self.check(remaining)
            produced = sink.pos
        }
        output.append(contentsOf: staging[0..<produced])
        return remaining
    }

    private static func check(_ result: Int) throws {
        if ZSTD_isError(result) != 0 {
            throw CompressionError.compressionFailed(reason: String(cString: ZSTD_getErrorName(result)))
        }
    }
}
