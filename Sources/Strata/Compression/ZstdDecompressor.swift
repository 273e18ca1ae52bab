import CZstd

/// Decompresses zstd frames, verifying each one's declared size and content
/// checksum, and reusing one context across calls.
///
/// Decompression is total: truncated, corrupted, empty or foreign input
/// throws a ``CompressionError`` naming the problem; it never crashes, and it
/// never allocates more than ``maximumOutputSize`` whatever a header claims.
/// Not thread-safe: use one per thread or task.
///
///     let decompressor = try ZstdDecompressor()
///     let bytes = try decompressor.decompress(frame)
public final class ZstdDecompressor {
    /// The largest decompressed size accepted, in bytes.
    public let maximumOutputSize: Int
    /// Whether frames without a content checksum are refused (the default:
    /// a frame that cannot be verified is not trusted).
    public let requiresChecksum: Bool

    private let context: OpaquePointer
    private var stream = StreamState()

    /// The default ``maximumOutputSize``: 4 GiB.
    public static let defaultMaximumOutputSize = 1 << 32

    /// Creates a decompressor.
    ///
    /// - Parameters:
    ///   - maximumOutputSize: frames declaring or producing more bytes throw
    ///     `CompressionError.tooLarge`.
    ///   - requiresChecksum: refuse frames that carry no content checksum.
    public init(maximumOutputSize: Int = defaultMaximumOutputSize, requiresChecksum: Bool = true) throws {
        guard let context = ZSTD_createDCtx() else {
            throw CompressionError.compressionFailed(reason: "cannot allocate a decompression context")
        }
        self.context = context
        self.maximumOutputSize = maximumOutputSize
        self.requiresChecksum = requiresChecksum
    }

    deinit {
        ZSTD_freeDCtx(context)
    }

    /// Decompresses exactly one zstd frame. O(n) in the output size.
    ///
    /// - Throws: ``CompressionError`` when `input` is empty, not zstd,
    ///   truncated, followed by extra bytes, corrupted, missing its checksum
    ///   (when required), or larger than ``maximumOutputSize``.
    public func decompress(_ input: UnsafeRawBufferPointer) throws -> [UInt8] {
        var output: [UInt8] = []
        try decompress(input, into: &output)
        return output
    }

    /// Decompresses exactly one zstd frame into `output`, replacing its
    /// contents and reusing its capacity (repeated calls with one buffer
    /// skip a fresh allocation and its page faults). On error `output` is
    /// left empty. O(n) in the output size.
    public func decompress(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) throws {
        output.removeAll(keepingCapacity: true)
        guard !stream.active else { throw CompressionError.streamMisuse("decompress called during a stream") }
        let (header, base, frameSize) = try wholeFrame(input)
        guard let declared = header.contentSize else {
            try decompressUnknownSize(input, into: &output)
            return
        }
        try checkDeclared(declared, frameSize: frameSize)
        ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
        output.resize(to: Int(declared))
        let result = output.withUnsafeMutableBytes { buffer in
            ZSTD_decompressDCtx(context, buffer.baseAddress, buffer.count, base, input.count)
        }
        if ZSTD_isError(result) != 0 {
            output.removeAll(keepingCapacity: true)
            throw Self.error(for: result, available: input.count)
        }
        guard result == Int(declared) else {
            output.removeAll(keepingCapacity: true)
            throw CompressionError.sizeMismatch(declared: Int(declared), actual: result)
        }
    }

    /// Checks that `input` is exactly one whole zstd frame that decodes,
    /// with its declared size and content checksum, without keeping its
    /// content: it is decoded a window at a time into one reused buffer.
    /// Accepts exactly the inputs `decompress(_:)` accepts.
    /// O(n) in the output size in time; in memory, zstd's window: at most
    /// the declared content size, or 128 MiB for a frame that declares none.
    ///
    /// - Returns: the size of the frame's content.
    /// - Throws: ``CompressionError`` as `decompress(_:)` does.
    @discardableResult
    public func check(_ input: UnsafeRawBufferPointer) throws -> Int {
        guard !stream.active else { throw CompressionError.streamMisuse("check called during a stream") }
        let (header, base, frameSize) = try wholeFrame(input)
        if let declared = header.contentSize { try checkDeclared(declared, frameSize: frameSize) }
        ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
        if header.contentSize != nil {
            // `decompress` decodes such a frame in one call, where zstd
            // limits no window (the declared size, checked above, bounds
            // the memory); the streaming decoder's default limit (128 MiB)
            // would refuse some of what it accepts.
            ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, ZSTD_dParam_getBounds(ZSTD_d_windowLogMax).upperBound)
        }
        defer {
            ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
            ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, 0)  // back to the default
        }
        var window = [UInt8](repeating: 0, count: ZSTD_DStreamOutSize())
        var source = ZSTD_inBuffer(src: base, size: input.count, pos: 0)
        var produced = 0
        while true {
            let (hint, written) = window.withUnsafeMutableBytes { buffer in
                var sink = ZSTD_outBuffer(dst: buffer.baseAddress, size: buffer.count, pos: 0)
                let hint = ZSTD_decompressStream(context, &sink, &source)
                return (hint, sink.pos)
            }
            if ZSTD_isError(hint) != 0 { throw Self.error(for: hint, available: input.count) }
            produced += written
            if produced > maximumOutputSize {
                throw CompressionError.tooLarge(size: UInt64(produced), limit: maximumOutputSize)
            }
            if hint == 0 { break }
            // All input taken and the window not filled: the frame wants
            // bytes it does not have.
            if source.pos == source.size && written < window.count {
                throw CompressionError.truncated(available: input.count, needed: nil)
            }
        }
        if source.pos < source.size {
            throw CompressionError.trailingData(offset: source.pos, count: source.size - source.pos)
        }
        if let declared = header.contentSize, declared != UInt64(produced) {
            throw CompressionError.sizeMismatch(declared: Int(clamping: declared), actual: produced)
        }
        return produced
    }

    /// The header, start and size of the one whole frame `input` must be:
    /// refused when it is not zstd, lacks a required checksum, is cut short,
    /// or has bytes after it.
    private func wholeFrame(
        _ input: UnsafeRawBufferPointer
    ) throws -> (header: ZstdFrameHeader, base: UnsafeRawPointer, size: Int) {
        let header = try ZstdFrameHeader(parsing: input)
        if requiresChecksum && !header.hasChecksum { throw CompressionError.missingChecksum }
        guard let base = input.baseAddress else { throw CompressionError.empty }
        let frameSize = ZSTD_findFrameCompressedSize(base, input.count)
        if ZSTD_isError(frameSize) != 0 {
            throw Self.error(for: frameSize, available: input.count)
        }
        if frameSize < input.count {
            throw CompressionError.trailingData(offset: frameSize, count: input.count - frameSize)
        }
        return (header, base, frameSize)
    }

    /// Refuses a declared content size over the limit, or larger than a
    /// frame of `frameSize` bytes can hold: every block of a frame takes at
    /// least 4 bytes (a 3-byte header and one byte of a run) and gives at
    /// most 128 KiB, so a frame declaring more lies, and is refused before
    /// its declared size is allocated.
    private func checkDeclared(_ declared: UInt64, frameSize: Int) throws {
        guard declared <= UInt64(maximumOutputSize) else {
            throw CompressionError.tooLarge(size: declared, limit: maximumOutputSize)
        }
        guard declared / 32_768 <= UInt64(frameSize) else {
            throw CompressionError.corrupted(
                reason: "a frame of \(frameSize) bytes declares \(declared) bytes of content, more than it can hold"
            )
        }
    }

    /// Decompresses exactly one zstd frame. O(n) in the output size.
    public func decompress(_ input: some Sequence<UInt8>) throws -> [UInt8] {
        if let result = try input.withContiguousStorageIfAvailable({ try decompress(UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return try Array(input).withUnsafeBytes { try decompress($0) }
    }

    /// A complete frame whose header does not record its size: decode in
    /// steps, growing the output up to the limit.
    private func decompressUnknownSize(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) throws {
        try beginStream()
        do {
            try feed(input, into: &output)
            try finishStream()
        } catch {
            cancelStream()
            output.removeAll(keepingCapacity: true)
            throw error
        }
    }

    // MARK: Streaming

    /// Starts decompressing a frame that arrives in pieces.
    public func beginStream() throws {
        guard !stream.active else { throw CompressionError.streamMisuse("beginStream called during a stream") }
        ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
        stream = StreamState()
        stream.active = true
    }

    /// Decompresses the next piece of the frame, appending decoded bytes to
    /// `output`. The header is checked as soon as enough bytes have arrived.
    public func feed(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) throws {
        guard stream.active else { throw CompressionError.streamMisuse("feed called before beginStream") }
        do {
            try feedChecked(input, into: &output)
        } catch {
            cancelStream()
            throw error
        }
    }

    /// Decompresses the next piece of the frame.
    public func feed(_ input: some Sequence<UInt8>, into output: inout [UInt8]) throws {
        let done: Void? = try input.withContiguousStorageIfAvailable {
            try feed(UnsafeRawBufferPointer($0), into: &output)
        }
        if done == nil {
            try Array(input).withUnsafeBytes { try feed($0, into: &output) }
        }
    }

    /// Ends the stream, verifying that a whole frame arrived.
    public func finishStream() throws {
        guard stream.active else { throw CompressionError.streamMisuse("finishStream called before beginStream") }
        let state = stream
        cancelStream()
        if state.consumed == 0 { throw CompressionError.empty }
        if state.header == nil {
            // Fewer bytes than a header: re-parse to report the precise reason.
            _ = try state.headerProbe.withUnsafeBytes { try ZstdFrameHeader(parsing: $0) }
        }
        guard state.frameDone else { throw CompressionError.truncated(available: state.consumed, needed: nil) }
        if let declared = state.header?.contentSize, declared != UInt64(state.produced) {
            throw CompressionError.sizeMismatch(declared: Int(clamping: declared), actual: state.produced)
        }
    }

    /// Abandons the current stream, if any.
    public func cancelStream() {
        stream = StreamState()
        ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
    }

    private func feedChecked(_ input: UnsafeRawBufferPointer, into output: inout [UInt8]) throws {
        guard input.count > 0, let base = input.baseAddress else { return }
        if stream.frameDone {
            throw CompressionError.trailingData(offset: stream.consumed, count: input.count)
        }
        if stream.header == nil {
            try probeHeader(input)
        }
        var source = ZSTD_inBuffer(src: base, size: input.count, pos: 0)
        let chunk = ZSTD_DStreamOutSize()
        while source.pos < source.size && !stream.frameDone {
            let start = output.count
            output.resize(to: start + chunk)
            let consumedBefore = source.pos
            var produced = 0
            let hint = output.withUnsafeMutableBytes { buffer in
                var sink = ZSTD_outBuffer(dst: buffer.baseAddress! + start, size: chunk, pos: 0)
                let hint = ZSTD_decompressStream(context, &sink, &source)
                produced = sink.pos
                return hint
            }
            output.removeLast(chunk - produced)
            stream.produced += produced
            stream.consumed += source.pos - consumedBefore
            if ZSTD_isError(hint) != 0 { throw Self.error(for: hint, available: stream.consumed) }
            if stream.produced > maximumOutputSize {
                throw CompressionError.tooLarge(size: UInt64(stream.produced), limit: maximumOutputSize)
            }
            if hint == 0 { stream.frameDone = true }
        }
        if source.pos < source.size {
            throw CompressionError.trailingData(offset: stream.consumed, count: source.size - source.pos)
        }
        // Drain output zstd may still hold for the finished input.
        while !stream.frameDone {
            let start = output.count
            output.resize(to: start + chunk)
            var produced = 0
            var empty = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
            let hint = output.withUnsafeMutableBytes { buffer in
                var sink = ZSTD_outBuffer(dst: buffer.baseAddress! + start, size: chunk, pos: 0)
                let hint = ZSTD_decompressStream(context, &sink, &empty)
                produced = sink.pos
                return hint
            }
            output.removeLast(chunk - produced)
            stream.produced += produced
            if ZSTD_isError(hint) != 0 { throw Self.error(for: hint, available: stream.consumed) }
            if stream.produced > maximumOutputSize {
                throw CompressionError.tooLarge(size: UInt64(stream.produced), limit: maximumOutputSize)
            }
            if hint == 0 { stream.frameDone = true }
            if produced < chunk { break }
        }
    }

    /// Collects the first bytes of the stream until the frame header parses,
    /// then applies the same checks as one-shot decompression.
    private func probeHeader(_ input: UnsafeRawBufferPointer) throws {
        let wanted = Int(ZSTD_FRAMEHEADERSIZE_MAX) - stream.headerProbe.count
        stream.headerProbe.append(contentsOf: input.prefix(max(wanted, 0)))
        do {
            let header = try stream.headerProbe.withUnsafeBytes { try ZstdFrameHeader(parsing: $0) }
            if requiresChecksum && !header.hasChecksum { throw CompressionError.missingChecksum }
            if let size = header.contentSize, size > UInt64(maximumOutputSize) {
                throw CompressionError.tooLarge(size: size, limit: maximumOutputSize)
            }
            stream.header = header
        } catch CompressionError.truncated {
            return  // wait for more bytes
        }
    }

    /// Maps a zstd error code to the error a caller can act on.
    static func error(for code: Int, available: Int) -> CompressionError {
        switch ZSTD_getErrorCode(code) {
        case ZSTD_error_checksum_wrong:
            return .checksumMismatch
        case ZSTD_error_srcSize_wrong:
            return .truncated(available: available, needed: nil)
        case ZSTD_error_prefix_unknown:
            return .notZstd(firstBytes: [])
        default:
            return .corrupted(reason: String(cString: ZSTD_getErrorName(code)))
        }
    }

    private struct StreamState {
        var active = false
        var header: ZstdFrameHeader?
        var headerProbe: [UInt8] = []
        var consumed = 0
        var produced = 0
        var frameDone = false
    }
}

/// What the header of a zstd frame says, read without decoding the frame.
struct ZstdFrameHeader {
    /// The decompressed size the frame declares; nil when it does not record it.
    var contentSize: UInt64?
    /// Whether the frame ends with a content checksum.
    var hasChecksum: Bool

    /// The four bytes that open every zstd frame (0xFD2FB528, little-endian).
    static let magic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]

    init(parsing input: UnsafeRawBufferPointer) throws {
        guard input.count > 0, let base = input.baseAddress else { throw CompressionError.empty }
        let prefix = Array(input.prefix(4))
        guard prefix == Array(Self.magic.prefix(prefix.count)) else {
            throw CompressionError.notZstd(firstBytes: Array(input.prefix(8)))
        }
        guard input.count >= 4 else { throw CompressionError.truncated(available: input.count, needed: nil) }
        var header = ZSTD_frameHeader()
        let result = ZSTD_getFrameHeader(&header, base, input.count)
        if ZSTD_isError(result) != 0 {
            throw ZstdDecompressor.error(for: result, available: input.count)
        }
        if result > 0 { throw CompressionError.truncated(available: input.count, needed: result) }
        contentSize = header.frameContentSize == UInt64.max ? nil : header.frameContentSize
        hasChecksum = header.checksumFlag != 0
    }
}
