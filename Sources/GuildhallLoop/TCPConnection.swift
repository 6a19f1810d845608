// One accepted TCP connection: reads into the loop's shared read buffer, and
// writes in batches. Loop thread only.
//
// Writes are queued as pieces, never sent one by one: `flush()` hands every
// queued piece to the socket in one `sendmsg`, and what it does not take to
// libuv in one uv_write. Shared pieces
// (`SharedBytes`, one encoding fanned out to many connections) are retained,
// not copied; small per-connection bytes (length prefixes, trailers,
// responses) go into a scratch buffer. A flush the socket takes whole costs
// no allocation; one it cannot take hands the scratch to a queued write.

import CLibUV
import GuildhallTLS
import Glibc
import Synchronization

/// Immutable bytes shared by many connections' write queues; freed when the
/// last write holding them completes.
public final class SharedBytes: @unchecked Sendable {  // immutable once made: loops pass one event to every gateway
    public let base: UnsafeMutableRawPointer
    public let count: Int
    /// For an event of a channel message, the message's server, channel and
    /// seq, as its maker said (server 0: not said). A session letting the
    /// event go unacknowledged notes them without reading the bytes: under
    /// load every event lets one go, and reading each was 3% of shape B's loop.
    public let channelMessage: (server: UInt64, channel: UInt64, seq: UInt64)

    public init(_ bytes: [UInt8]) {
        count = bytes.count
        channelMessage = (0, 0, 0)
        base = RawMemory.take(count)
        bytes.withUnsafeBytes { if count > 0 { base.copyMemory(from: $0.baseAddress!, byteCount: count) } }
    }

    /// `count` bytes that `write` puts in place, with no array between.
    public init(count: Int, channelMessage: (server: UInt64, channel: UInt64, seq: UInt64) = (0, 0, 0),
                _ write: (UnsafeMutableRawPointer) -> Void) {
        self.count = count
        self.channelMessage = channelMessage
        base = RawMemory.take(count)
        write(base)
    }

    deinit { RawMemory.release(base) }
}

/// Connections counted together (a node's, for its connection cap), from
/// when one joins the count until libuv releases it, whichever loop holds it.
public final class ConnectionCount: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public var current: Int { value.load(ordering: .relaxed) }
    fileprivate func add(_ n: Int) { value.add(n, ordering: .relaxed) }
}

public final class TCPConnection {
    enum Piece {
        case scratch(offset: Int, count: Int)
        /// Bytes of a `SharedBytes` that `pendingShared` keeps alive: a plain
        /// pointer, so queuing costs no reference count beyond that one.
        case shared(base: UnsafeMutableRawPointer, count: Int)
    }

    final class WriteContext {
        let connection: TCPConnection
        let shared: [SharedBytes]
        /// The scratch bytes this write took; freed when it completes.
        let scratch: UnsafeMutableRawPointer?
        let bytes: Int
        init(connection: TCPConnection, shared: [SharedBytes], scratch: UnsafeMutableRawPointer?, bytes: Int) {
            self.connection = connection; self.shared = shared; self.scratch = scratch; self.bytes = bytes
        }
        deinit { RawMemory.release(scratch) }
    }

    let handle: UnsafeMutablePointer<uv_tcp_t>
    /// TLS on this connection (TLSStream): what is read is decrypted before
    /// `onRead`, what is queued is encrypted at `flush`. Nil: plaintext.
    public private(set) var tls: TLSStream?
    private var pieces: [Piece] = []
    private var pendingShared: [SharedBytes] = []
    /// Per-connection bytes of the next write (prefixes, trailers, small
    /// payloads, responses), plain memory: the per-delivery path touches no
    /// reference count (a class here cost a retain and release per event).
    private var scratch: UnsafeMutableRawPointer?
    private var scratchCapacity = 0
    private var scratchCount = 0
    /// The socket's descriptor once asked for (`sendNow`): libuv's `uv_fileno`
    /// reads the handle, memory of its own, a miss per flush at shape D (1.7% of its loop).
    private var socketFD: Int32 = -1
    /// The most scratch bytes a recent flush used, an eighth less at each
    /// flush that used less (at most `maxRecentScratch`): the scratch stays
    /// while this needs a quarter of it, and one made anew starts this large.
    /// In shape B at full rate a subscriber's flushes alternate between
    /// 370 KB of events and an acknowledgement's answer: the room went back
    /// at each answer (or with a write the socket could not take at once),
    /// and grown again by doubling from 512 the scratch copied what it held
    /// at each step: 6-7% of that loop, in realloc.
    private var recentScratch = 0
    private static let maxRecentScratch = 1 << 20
    /// A flush happened since the last `reviewRoom`.
    private var flushedSinceReview = false
    private var pendingBytes = 0
    /// Queued writes libuv has not completed; while any is, bytes must queue behind it.
    private var writesInFlight = 0
    private var isClosing = false
    private var isReading = false
    /// Set in the close callback: the handle's memory is gone.
    private var isClosed = false

    /// Scratch bytes kept for the next flush's small pieces.
    public var scratchRoom: Int { scratchCapacity }
    /// Bytes queued here plus bytes handed to libuv and not yet written.
    public private(set) var queuedBytes = 0
    /// The loop's total of `queuedBytes` over its connections (`EventLoop.outboundBytes`).
    private let loopOutbound: UnsafeMutablePointer<Int>
    /// Called with each chunk read. The bytes are valid only during the call.
    public var onRead: ((UnsafeRawBufferPointer) -> Void)?
    /// Called once when the peer closes or the connection fails (libuv error code).
    public var onEnd: ((Int32) -> Void)?
    /// Called after a write completes, with the bytes still queued.
    public var onWritten: ((Int) -> Void)?
    /// Writes completed so far: unchanged while bytes are queued means the peer stopped reading.
    public private(set) var writesCompleted: UInt64 = 0

    /// Loop time the socket last took bytes while some waited for it (see `stuckMillis`).
    private var tookBytesAt: UInt64 = 0
    /// libuv's unwritten bytes at the last look: fewer now means the socket took some.
    private var unwrittenAtLook = 0

    /// Milliseconds the socket has taken none of the bytes waiting for it (0
    /// when none wait): a peer that stopped reading, as against one reading
    /// slowly. Looks at writes that complete and at libuv's queue shrinking
    /// within a long write, so a slow reader of a large write is not stuck.
    public func stuckMillis() -> UInt64 {
        guard writesInFlight > 0, !isClosing else { return 0 }
        let now = uv_now(handle.pointee.loop)
        lookForProgress(now)
        return now &- tookBytesAt
    }

    private func lookForProgress(_ now: UInt64) {
        let unwritten = unwrittenBytes
        if unwritten < unwrittenAtLook { tookBytesAt = now }
        unwrittenAtLook = unwritten
    }

    /// Bytes libuv still has to hand to the kernel; falling between two looks
    /// means a long write is making progress.
    public var unwrittenBytes: Int { isClosing ? 0 : uv_stream_get_write_queue_size(asStream(handle)) }
    /// Called once libuv has released the connection, after `close` or `abort`.
    public var onReleased: (() -> Void)?

    /// Connects to host:port; `done` gets the connection, or nil and the libuv error.
    public static func connect(loop: EventLoop, host: String, port: Int, _ done: @escaping (TCPConnection?, Int32) -> Void) {
        let conn = TCPConnection(loop: loop.raw)
        guard var address = SocketAddress.make(host: host, port: port) else {
            conn.abort()
            done(nil, Int32(UV_EINVAL.rawValue))
            return
        }
        final class Pending {
            let conn: TCPConnection
            let done: (TCPConnection?, Int32) -> Void
            init(_ conn: TCPConnection, _ done: @escaping (TCPConnection?, Int32) -> Void) { self.conn = conn; self.done = done }
        }
        let req = UnsafeMutablePointer<uv_connect_t>.allocate(capacity: 1)
        req.pointee.data = Unmanaged.passRetained(Pending(conn, done)).toOpaque()
        let rc = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { a in
                uv_tcp_connect(req, conn.handle, a) { req, status in
                    guard let req else { return }
                    let pending = Unmanaged<Pending>.fromOpaque(req.pointee.data).takeRetainedValue()
                    req.deallocate()
                    if status == 0 {
                        uv_tcp_nodelay(pending.conn.handle, 1)
                        pending.done(pending.conn, 0)
                    } else {
                        pending.conn.abort()
                        pending.done(nil, status)
                    }
                }
            }
        }
        if rc != 0 {
            Unmanaged<Pending>.fromOpaque(req.pointee.data).release()
            req.deallocate()
            conn.abort()
            done(nil, rc)
        }
    }

    init(loop: UnsafeMutablePointer<uv_loop_t>) {
        handle = allocateHandle(uv_tcp_t.self)
        uv_tcp_init(loop, handle)
        loopOutbound = Unmanaged<EventLoop>.fromOpaque(loop.pointee.data!).takeUnretainedValue().outbound
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// The count this connection is part of until it is released (set once).
    public var count: ConnectionCount? {
        didSet { if oldValue == nil, !isClosed { count?.add(1) } }
    }

    /// Whether `queuedBytes` is part of the loop's total: an aborted
    /// connection's bytes leave it at once, not when libuv cancels its writes
    /// (the next loop turn), so a cut that bounds the total is seen at once.
    private var inLoopTotal = true

    @inline(__always)
    private func queued(_ delta: Int) {
        queuedBytes += delta
        if inLoopTotal { loopOutbound.pointee += delta }
    }

    /// A connection on `loop` for a socket another loop gave up (`detachSocket`):
    /// a session moves to the loop that should serve it without the peer noticing.
    public static func adopt(loop: EventLoop, socket fd: Int32) -> TCPConnection? {
        let conn = TCPConnection(loop: loop.raw)
        guard uv_tcp_open(conn.handle, uv_os_sock_t(fd)) == 0 else {
            conn.abort()
            return nil
        }
        uv_tcp_nodelay(conn.handle, 1)
        return conn
    }

    /// Gives up the socket to another loop: returns a descriptor of its own
    /// (the caller owns it) and closes this connection's handle without
    /// touching the peer. Only for a connection with nothing queued; nil when
    /// it has bytes queued or the socket cannot be duplicated.
    public func detachSocket() -> Int32? {
        guard !isClosing, queuedBytes == 0, pieces.isEmpty else { return nil }
        var fd: uv_os_fd_t = -1
        guard uv_fileno(asHandle(handle), &fd) == 0 else { return nil }
        let copy = dup(fd)
        guard copy >= 0 else { return nil }
        stopReading()
        beginClosing()
        TCPConnection.finishClose(asStream(handle))
        return copy
    }

    /// Whether bytes wait for the next flush.
    public var hasUnflushed: Bool { !pieces.isEmpty }

    /// The peer's address as "host:port", for logs.
    public var peer: String {
        var storage = sockaddr_storage()
        var len = Int32(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_getpeername(handle, $0, &len) }
        }
        return rc == 0 ? SocketAddress.describe(&storage) : "?"
    }

    public func startReading() {
        guard !isReading, !isClosing else { return }
        isReading = true
        uv_read_start(asStream(handle), { h, suggested, buf in
            guard let h, let buf, let loopData = h.pointee.loop.pointee.data else { return }
            let loop = Unmanaged<EventLoop>.fromOpaque(loopData).takeUnretainedValue()
            buf.pointee = uv_buf_init(loop.readBuffer.assumingMemoryBound(to: CChar.self), UInt32(EventLoop.readBufferSize))
        }, { s, n, buf in
            guard let s, let data = s.pointee.data else { return }
            let conn = Unmanaged<TCPConnection>.fromOpaque(data).takeUnretainedValue()
            if n > 0, let base = buf?.pointee.base {
                if conn.tls != nil { return conn.receivedCiphertext(UnsafeRawBufferPointer(start: base, count: n)) }
                conn.onRead?(UnsafeRawBufferPointer(start: base, count: n))
            } else if n < 0 {
                conn.stopReading()
                conn.onEnd?(Int32(n))
            }
        })
    }

    /// Sets the kernel's send buffer (SO_SNDBUF, which Linux doubles); the
    /// kernel no longer sizes it itself (up to tcp_wmem's most, 4 MiB here).
    public func setSendBuffer(bytes: Int) {
        guard !isClosing else { return }
        var value = Int32(clamping: bytes)
        uv_send_buffer_size(asHandle(handle), &value)
    }

    public func stopReading() {
        guard isReading else { return }
        isReading = false
        if !isClosing { uv_read_stop(asStream(handle)) }
    }

    public var readingPaused: Bool { !isReading }

    /// Queues bytes to send; they are copied.
    public func enqueue(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            enqueueScratch(raw.count) { p in
                if raw.count > 0 { p.copyMemory(from: raw.baseAddress!, byteCount: raw.count) }
                return raw.count
            }
        }
    }

    /// Queues up to `maxBytes` written by `write`, which returns how many it wrote.
    public func enqueueScratch(_ maxBytes: Int, _ write: (UnsafeMutableRawPointer) -> Int) {
        guard let p = reserveScratch(maxBytes) else { return }
        commitScratch(write(p), reserved: maxBytes)
    }

    /// The hot-path form of `enqueueScratch` without a closure: reserve room
    /// for at most `maxBytes`, write there, then `commitScratch` what was
    /// written. Nil when the connection is closing.
    public func reserveScratch(_ maxBytes: Int) -> UnsafeMutableRawPointer? {
        guard !isClosing else { return nil }
        if scratchCount + maxBytes > scratchCapacity { growScratch(to: scratchCount + maxBytes) }
        let offset = scratchCount
        scratchCount += maxBytes
        return scratch! + offset
    }

    /// Room a connection keeps between flushes whatever they used: 16 KiB of
    /// scratch (a busy turn's events), 16 pieces. With 4 KiB, subscribers of
    /// a channel sending 1,000 messages a second (shape D) gave their room
    /// back and grew it again every few turns, as turns carried one message
    /// or thirty: realloc and the page faults of fresh room were 3.5% of the
    /// loop. An idle connection keeps nothing (`reviewRoom`).
    private static let keptScratch = 16 << 10, keptPieces = 16

    /// Empties the queue of what was just handed to the socket or to a write.
    /// Room beyond the kept amount stays only while recent flushes use a
    /// quarter of it: a burst's room goes back after about twenty ordinary
    /// flushes. (Kept room
    /// only grew before: each of R3's 10 000 sessions kept room for its
    /// largest burst, the process grew for the whole hour, and heaptrack
    /// found scratch holding 285 of the heap's 324 MB at its peak.)
    private func forgetWritten() {
        flushedSinceReview = true
        recentScratch = min(max(scratchCount, recentScratch - recentScratch / 8), Self.maxRecentScratch)
        let keep = pieces.capacity <= Self.keptPieces || pieces.count * 4 >= pieces.capacity
        pieces.removeAll(keepingCapacity: keep)
        pendingShared.removeAll(keepingCapacity: keep)
        if scratchCapacity > Self.keptScratch && recentScratch * 4 < scratchCapacity {
            RawMemory.release(scratch)
            scratch = nil
            scratchCapacity = 0
        }
        scratchCount = 0
        pendingBytes = 0
    }

    /// Called now and then (the gateway's sweep): a connection that flushed
    /// nothing since the last call gives back its scratch and its queue's
    /// storage, and its next flush starts small. An idle session kept the
    /// room its login's answers used (512 bytes of scratch, 16 pieces): an
    /// eighth of an idle session's memory (`bench connections`). Returns
    /// whether it was quiet, so the session's own buffers can follow.
    @discardableResult
    public func reviewRoom() -> Bool {
        defer { flushedSinceReview = false }
        guard !flushedSinceReview, pendingBytes == 0, pieces.isEmpty else { return false }
        RawMemory.release(scratch)
        scratch = nil
        scratchCapacity = 0
        recentScratch = 0
        pieces = []
        pendingShared = []
        return true
    }

    private func growScratch(to needed: Int) {
        // Small at first: an idle session keeps what its last write needed.
        // Made anew, as large as recent flushes needed.
        var capacity = max(512, scratchCapacity * 2, scratchCapacity == 0 ? recentScratch : 0)
        while capacity < needed { capacity *= 2 }
        scratch = RawMemory.resize(scratch, to: capacity)
        scratchCapacity = capacity
    }

    public func commitScratch(_ written: Int, reserved: Int) {
        let offset = scratchCount - reserved
        scratchCount = offset + written
        if case .scratch(let o, let c)? = pieces.last, o + c == offset {
            pieces[pieces.count - 1] = .scratch(offset: o, count: c + written)
        } else {
            pieces.append(.scratch(offset: offset, count: written))
        }
        pendingBytes += written
        queued(written)
    }

    /// Queues shared bytes, from byte `start` on, without copying them.
    public func enqueue(shared: SharedBytes, from start: Int = 0) {
        guard !isClosing else { return }
        let count = shared.count - start
        pieces.append(.shared(base: shared.base + start, count: count))
        pendingShared.append(shared)
        pendingBytes += count
        queued(count)
    }

    /// Sends everything queued in one call. When no earlier write is
    /// still in libuv's hands, the bytes go straight to the socket
    /// (`sendNow`): the usual case, and then the write costs no request,
    /// no context and no completion callback, and the scratch memory stays
    /// for the next turn (measured, shape C: malloc and free were 13% of the
    /// loop, most of it here). What the socket does not take goes the
    /// queued way. Owners that want `onWritten` always go the queued way, so
    /// the callback never runs inside `flush`.
    public func flush() {
        if tls != nil, !isClosing { encryptQueued() }
        guard !pieces.isEmpty, !isClosing else { return }
        withUnsafeTemporaryAllocation(of: uv_buf_t.self, capacity: pieces.count) { bufs in
            let scratchBase = scratch
            for (i, piece) in pieces.enumerated() {
                switch piece {
                case .scratch(let offset, let count):
                    bufs[i] = uv_buf_init((scratchBase! + offset).assumingMemoryBound(to: CChar.self), UInt32(count))
                case .shared(let base, let count):
                    bufs[i] = uv_buf_init(base.assumingMemoryBound(to: CChar.self), UInt32(count))
                }
            }
            var first = 0
            if writesInFlight == 0 && onWritten == nil {
                let n = sendNow(bufs.baseAddress!, count: pieces.count)
                if n == Int32(pendingBytes) {
                    queued(-pendingBytes)
                    writesCompleted &+= 1
                    forgetWritten()
                    return
                }
                // Partly written: skip what went, queue the rest. (An error
                // other than EAGAIN is reported by the queued write below.)
                var left = Int(max(n, 0))
                while left > 0 {
                    let len = Int(bufs[first].len)
                    if left >= len {
                        first += 1
                        left -= len
                    } else {
                        bufs[first] = uv_buf_init(bufs[first].base + left, UInt32(len - left))
                        left = 0
                    }
                }
            }
            // A wait starts now, or goes on (did the socket take some of the earlier writes meanwhile?).
            let now = uv_now(handle.pointee.loop)
            if writesInFlight == 0 { tookBytesAt = now } else { lookForProgress(now) }
            let context = WriteContext(connection: self, shared: pendingShared, scratch: scratch, bytes: pendingBytes)
            let req = RawMemory.take(one: uv_write_t.self)
            req.pointee.data = Unmanaged.passRetained(context).toOpaque()
            let count = UInt32(pieces.count - first)
            scratch = nil  // the write owns it now
            scratchCapacity = 0
            forgetWritten()
            // libuv copies the buf array into the request.
            let rc = uv_write(req, asStream(handle), bufs.baseAddress! + first, count) { req, status in
                guard let req else { return }
                let context = Unmanaged<WriteContext>.fromOpaque(req.pointee.data).takeRetainedValue()
                RawMemory.release(req)
                context.connection.writesInFlight -= 1
                context.connection.writeCompleted(bytes: context.bytes, status: status)
            }
            if rc != 0 {
                Unmanaged<WriteContext>.fromOpaque(req.pointee.data).release()
                RawMemory.release(req)
                writeCompleted(bytes: context.bytes, status: rc)
            } else {
                writesInFlight += 1
                unwrittenAtLook = unwrittenBytes
            }
        }
    }

    /// IOV_MAX, which Glibc does not export to Swift (Linux: 1024).
    public static let iovMax = 1024

    /// What the socket takes of `bufs` now, without waiting (0 when it takes
    /// nothing or fails: the queued write that follows reports the error).
    /// `send`/`sendmsg` rather than libuv's `uv_try_write`, which writes with
    /// `write`/`writev`: those go through the file layer (`vfs_write`, its
    /// position lock and notification hooks) before the socket's own send,
    /// 4-6% of the loop when each turn writes to a thousand subscribers.
    /// At most IOV_MAX pieces go at once; the rest queue, as a partial write's do.
    private func sendNow(_ bufs: UnsafeMutablePointer<uv_buf_t>, count: Int) -> Int32 {
        if socketFD < 0 {
            var fd: uv_os_fd_t = -1
            guard uv_fileno(asHandle(handle), &fd) == 0 else { return 0 }
            socketFD = fd
        }
        let fd = socketFD
        let n: Int
        if count == 1 {
            n = send(fd, bufs[0].base, bufs[0].len, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        } else {
            // uv_buf_t is laid out as struct iovec on Unix (libuv's promise).
            var message = msghdr()
            message.msg_iov = UnsafeMutableRawPointer(bufs).assumingMemoryBound(to: iovec.self)
            message.msg_iovlen = min(count, Self.iovMax)
            n = sendmsg(fd, &message, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        return n < 0 ? 0 : Int32(clamping: n)
    }

    // MARK: TLS

    /// Speaks TLS from now on; `early` are bytes already read (after a PROXY header), ciphertext.
    public func startTLS(_ stream: TLSStream, early: UnsafeRawBufferPointer) {
        tls = stream
        if !early.isEmpty { receivedCiphertext(early) }
    }

    /// Ciphertext read: handshake records answered at once, plaintext to `onRead`.
    /// A peer that breaks TLS gets OpenSSL's alert and the connection ends.
    func receivedCiphertext(_ bytes: UnsafeRawBufferPointer) {
        guard let tls else { return }
        var plain: [UInt8] = []
        do throws(TLSError) { try tls.receive(bytes, into: &plain) } catch {
            tlsFailure = error.description
            flush()
            stopReading()
            onEnd?(Int32(UV_EPROTO.rawValue))
            return
        }
        if tls.hasOutgoing { flush() }
        if !plain.isEmpty { plain.withUnsafeBytes { onRead?($0) } }
        if tls.peerClosed, !isClosing {
            stopReading()
            onEnd?(Int32(UV_EOF.rawValue))
        }
    }

    /// Why TLS failed, when it did (for the log).
    public private(set) var tlsFailure: String?

    /// The queued plaintext into TLS records, queued in its place; `flush`
    /// hands those to the socket at once, so what is queued is always plaintext.
    private func encryptQueued() {
        guard let tls else { return }
        if !pieces.isEmpty {
            // One record per flush, not one per piece: a record costs its header, its tag and a cipher call.
            let scratchBase = scratch
            withUnsafeTemporaryAllocation(byteCount: pendingBytes, alignment: 16) { all in
                var at = 0
                for piece in pieces {
                    let (base, count): (UnsafeRawPointer, Int) = switch piece {
                    case .scratch(let offset, let count): (UnsafeRawPointer(scratchBase! + offset), count)
                    case .shared(let base, let count): (UnsafeRawPointer(base), count)
                    }
                    all.baseAddress!.advanced(by: at).copyMemory(from: base, byteCount: count)
                    at += count
                }
                do throws(TLSError) { try tls.send(UnsafeRawBufferPointer(start: all.baseAddress, count: at)) } catch { tlsFailure = error.description }
            }
            queued(-pendingBytes)
            forgetWritten()
        }
        let records = tls.outgoing()
        if !records.isEmpty { enqueue(records) }
    }

    private func writeCompleted(bytes: Int, status: Int32) {
        queued(-bytes)
        writesCompleted &+= 1
        if !isClosing {
            tookBytesAt = uv_now(handle.pointee.loop)
            unwrittenAtLook = unwrittenBytes
        }
        if status < 0 && status != Int32(UV_ECANCELED.rawValue) && !isClosing {
            stopReading()
            onEnd?(status)
            return
        }
        onWritten?(queuedBytes)
    }

    deinit { RawMemory.release(scratch) }

    /// How long a closed connection waits for its peer's end after the
    /// peer last sent something, and at most in all (see `close`).
    public static let lingerMillis: UInt64 = 2_000
    public static let lingerMostMillis: UInt64 = 15_000

    /// Flushes what is queued, then closes. Callbacks stop at once.
    ///
    /// A lingering close (as web servers do): what the peer still sends is
    /// read and thrown away until its end, while the last bytes go out and
    /// the write side shuts down. Closing a socket that holds unread input
    /// makes the kernel send a reset, and a reset makes the peer's kernel
    /// discard what it received and had not yet handed to the application:
    /// a client still writing when the server closed (after its bad frame,
    /// or at shutdown) lost its close reason that way. So the wait ends
    /// `lingerMillis` after the peer last sent something (it has stopped
    /// writing and had that long to read), and at most after `lingerMostMillis`.
    public func close() {
        guard !isClosing else { return }
        // What is queued goes out (encrypted) before the goodbye, which must be the last record.
        if let tls {
            flush()
            tls.shutdown()
        }
        flush()
        beginClosing()
        let stream = asStream(handle)
        uv_read_stop(stream)
        if uv_read_start(stream, { h, _, buf in
            guard let h, let buf, let loopData = h.pointee.loop.pointee.data else { return }
            let loop = Unmanaged<EventLoop>.fromOpaque(loopData).takeUnretainedValue()
            buf.pointee = uv_buf_init(loop.readBuffer.assumingMemoryBound(to: CChar.self), UInt32(EventLoop.readBufferSize))
        }, { s, n, _ in
            guard let s, let data = s.pointee.data else { return }
            let c = Unmanaged<TCPConnection>.fromOpaque(data).takeUnretainedValue()
            // Bytes read are thrown away; the peer is still writing, so the wait goes on.
            if n >= 0 { return c.lingerHeard() }
            c.lingerStep(peerEnded: true, error: n != Int(UV_EOF.rawValue))
        }) != 0 {
            lingerState.peerEnded = true
        }
        lingerSince = uv_now(handle.pointee.loop)
        lingerTimer = LingerTimer(loop: handle.pointee.loop, after: Self.lingerMillis) { [unowned self] in TCPConnection.finishClose(asStream(self.handle)) }
        let shutdownReq = UnsafeMutablePointer<uv_shutdown_t>.allocate(capacity: 1)
        shutdownReq.pointee.data = nil
        if uv_shutdown(shutdownReq, stream, { req, status in
            guard let req else { return }
            let h = req.pointee.handle!
            req.deallocate()
            guard let data = h.pointee.data else { return TCPConnection.finishClose(h) }
            Unmanaged<TCPConnection>.fromOpaque(data).takeUnretainedValue().lingerStep(shutDown: true, error: status < 0)
        }) != 0 {
            shutdownReq.deallocate()
            TCPConnection.finishClose(stream)
        }
    }

    /// Where a lingering close is: the write side shut down, the peer's end read.
    private var lingerState = (shutDown: false, peerEnded: false)
    private var lingerTimer: LingerTimer?
    private var lingerSince: UInt64 = 0

    /// The peer sent more while the close lingers: wait `lingerMillis` from now, within `lingerMostMillis` in all.
    private func lingerHeard() {
        let now = uv_now(handle.pointee.loop), end = lingerSince + Self.lingerMostMillis
        guard now < end else { return }
        lingerTimer?.restart(after: min(Self.lingerMillis, end - now))
    }

    /// A lingering close ends when both sides are done, or at once on an error.
    private func lingerStep(shutDown: Bool = false, peerEnded: Bool = false, error: Bool) {
        if shutDown { lingerState.shutDown = true }
        if peerEnded {
            lingerState.peerEnded = true
            uv_read_stop(asStream(handle))
        }
        if error || (lingerState.shutDown && lingerState.peerEnded) { TCPConnection.finishClose(asStream(handle)) }
    }

    /// Stops callbacks and keeps self alive until libuv is done with the
    /// handle; pending writes complete (or are cancelled) before the close callback runs.
    private func beginClosing() {
        isClosing = true
        isReading = false
        onRead = nil
        onEnd = nil
        onWritten = nil
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    /// Closes at once, dropping whatever is not yet written (slow consumers,
    /// shutdown deadline): a reset, so neither the kernel keeps trying to
    /// deliver the backlog nor the peer reads it before noticing.
    public func abort() {
        if isClosed { return }
        if isClosing {
            // A graceful close is under way; libuv does not allow a reset after a shutdown.
            TCPConnection.finishClose(asStream(handle))
            return
        }
        beginClosing()
        loopOutbound.pointee -= queuedBytes
        inLoopTotal = false
        if uv_tcp_close_reset(handle, TCPConnection.released) != 0 { TCPConnection.finishClose(asStream(handle)) }
    }

    /// Whether libuv has released the connection.
    public var closed: Bool { isClosed }

    private static func finishClose(_ stream: UnsafeMutablePointer<uv_stream_t>) {
        let h = UnsafeMutableRawPointer(stream).assumingMemoryBound(to: uv_handle_t.self)
        if uv_is_closing(h) != 0 { return }
        if let data = h.pointee.data {
            let c = Unmanaged<TCPConnection>.fromOpaque(data).takeUnretainedValue()
            c.lingerTimer?.close()  // (the object goes with the connection: this may run in its own callback)
        }
        uv_close(h, released)
    }

    /// libuv is done with the handle: tell the owner and free it.
    private static let released: uv_close_cb = { h in
        guard let h else { return }
        if let data = h.pointee.data {
            let conn = Unmanaged<TCPConnection>.fromOpaque(data)
            let c = conn.takeUnretainedValue()
            c.isClosed = true
            c.count?.add(-1)
            // Bytes never handed to libuv (an abort) leave the loop's total too.
            c.queued(-c.queuedBytes)
            c.lingerTimer = nil
            let released = c.onReleased
            c.onReleased = nil
            released?()
            conn.release()
        }
        UnsafeMutableRawPointer(h).deallocate()
    }
}

/// A one-shot libuv timer that bounds a lingering close (restarted while the peer sends); freed when closed.
private final class LingerTimer {
    private let timer: UnsafeMutablePointer<uv_timer_t>
    private let fired: () -> Void

    init(loop: UnsafeMutablePointer<uv_loop_t>, after millis: UInt64, _ fired: @escaping () -> Void) {
        self.fired = fired
        timer = .allocate(capacity: 1)
        uv_timer_init(loop, timer)
        timer.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        restart(after: millis)
    }

    /// Fires `millis` from now instead.
    func restart(after millis: UInt64) {
        guard timer.pointee.data != nil else { return }
        uv_timer_start(timer, { t in
            guard let t, let data = t.pointee.data else { return }
            Unmanaged<LingerTimer>.fromOpaque(data).takeUnretainedValue().fired()
        }, millis, 0)
    }

    func close() {
        guard timer.pointee.data != nil else { return }
        timer.pointee.data = nil
        uv_close(UnsafeMutableRawPointer(timer).assumingMemoryBound(to: uv_handle_t.self)) { h in UnsafeMutableRawPointer(h!).deallocate() }
    }
}
