// A libuv loop of our own (not uv_default_loop, so that tests can run several
// servers in one process, each on its own thread), and the casts libuv's C
// "inheritance" needs. Every type in this module is confined to the thread
// that runs its loop, except `LoopWaker`, which exists to cross threads.

import CLibUV
import Glibc

/// One libuv loop. Confined to the thread that created it.
public final class EventLoop {
    public let raw: UnsafeMutablePointer<uv_loop_t>
    /// One read buffer for every connection of the loop: libuv calls alloc
    /// and read back to back for one stream at a time, and readers copy out
    /// what they keep, so idle connections hold no read buffer of their own.
    static let readBufferSize = 64 * 1024
    let readBuffer: UnsafeMutableRawPointer
    /// Bytes queued on all of the loop's connections and not yet taken by
    /// the kernel; plain memory that every connection adds to without a
    /// reference count (it changes on every write).
    let outbound: UnsafeMutablePointer<Int>

    /// Bytes queued on all of the loop's connections and not yet taken by the kernel.
    public var outboundBytes: Int { outbound.pointee }

    public init() {
        raw = .allocate(capacity: 1)
        readBuffer = .allocate(byteCount: Self.readBufferSize, alignment: 16)
        outbound = .allocate(capacity: 1)
        outbound.initialize(to: 0)
        let rc = uv_loop_init(raw)
        precondition(rc == 0, "uv_loop_init failed: \(UVError.text(rc))")
        raw.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// CPU nanoseconds of the calling thread, which is the loop's when called
    /// from its callbacks: the time the loop worked, since it blocks in poll
    /// whenever it has nothing to do. Not libuv's idle-time metric: with it
    /// on, every poll that would block first polls once more without
    /// blocking, one more system call each loop turn (a turn per message in
    /// shape F, docs/performance.md).
    public var busyNanoseconds: UInt64 {
        assertOnLoop()  // another thread's clock would be read
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
    }

    deinit {
        raw.deallocate()
        readBuffer.deallocate()
        outbound.deallocate()
    }

    /// Runs until no active handle remains or `stop()` is called.
    public func run() {
        #if DEBUG
        running = pthread_self()
        defer { running = nil }
        #endif
        uv_run(raw, UV_RUN_DEFAULT)
    }

    #if DEBUG
    /// The thread running the loop now (debug builds check the confinement with it).
    private var running: pthread_t?
    #endif

    /// Debug builds: stops the process when called, while the loop runs, from
    /// any thread but the loop's: the "loop thread only" rule the types that
    /// hold a loop's state state in their headers. Release builds: nothing.
    @inline(__always)
    public func assertOnLoop(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        if let running { precondition(pthread_equal(running, pthread_self()) != 0, "called off its loop's thread", file: file, line: line) }
        #endif
    }

    /// Runs callbacks that are ready without blocking.
    public func runOnce() { uv_run(raw, UV_RUN_NOWAIT) }

    public func stop() { uv_stop(raw) }

    /// Closes the loop; returns 0, or UV_EBUSY when a handle is still open (a leak).
    @discardableResult
    public func close() -> Int32 {
        // Let pending close callbacks run first.
        uv_run(raw, UV_RUN_DEFAULT)
        return uv_loop_close(raw)
    }

    /// The loop's cached clock in milliseconds, updated once per iteration.
    public var nowMillis: UInt64 { uv_now(raw) }

    /// Monotonic nanoseconds, exact.
    public static var hrtime: UInt64 { uv_hrtime() }
}

/// libuv error codes as text.
public enum UVError {
    public static func text(_ code: Int32) -> String {
        String(cString: uv_strerror(code))
    }
}

@inline(__always)
func asHandle<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_handle_t> {
    UnsafeMutableRawPointer(p).assumingMemoryBound(to: uv_handle_t.self)
}

@inline(__always)
func asStream<T>(_ p: UnsafeMutablePointer<T>) -> UnsafeMutablePointer<uv_stream_t> {
    UnsafeMutableRawPointer(p).assumingMemoryBound(to: uv_stream_t.self)
}

/// Closes a handle and frees its memory in the close callback, the only
/// place where libuv allows it.
func closeAndFree<T>(_ p: UnsafeMutablePointer<T>) {
    let h = asHandle(p)
    if uv_is_closing(h) != 0 { return }
    uv_close(h) { h in
        guard let h else { return }
        UnsafeMutableRawPointer(h).deallocate()
    }
}

/// Allocates zeroed memory for a libuv handle type.
func allocateHandle<T>(_: T.Type) -> UnsafeMutablePointer<T> {
    let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<T>.size, alignment: MemoryLayout<T>.alignment)
    raw.initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<T>.size)
    return raw.assumingMemoryBound(to: T.self)
}
