// A repeating or one-shot libuv timer calling a Swift closure. Loop thread only.

import CLibUV

public final class LoopTimer {
    private let handle: UnsafeMutablePointer<uv_timer_t>
    private var action: (() -> Void)?
    /// Closing twice must not touch the handle: its memory is freed once libuv has closed it.
    private var closed = false

    public init(loop: EventLoop) {
        handle = allocateHandle(uv_timer_t.self)
        uv_timer_init(loop.raw, handle)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Calls `action` after `afterMillis`, then every `repeatMillis` (0: once).
    public func start(afterMillis: UInt64, repeatMillis: UInt64, _ action: @escaping () -> Void) {
        self.action = action
        uv_timer_start(handle, { h in
            guard let h, let data = h.pointee.data else { return }
            Unmanaged<LoopTimer>.fromOpaque(data).takeUnretainedValue().action?()
        }, afterMillis, repeatMillis)
    }

    public func stop() { if !closed { uv_timer_stop(handle) } }

    /// Stops and releases the handle; the timer is unusable afterwards. Closing again does nothing.
    public func close() {
        guard !closed else { return }
        closed = true
        action = nil
        handle.pointee.data = nil
        closeAndFree(handle)
    }
}

/// Runs a closure once per loop iteration, right after I/O callbacks: the
/// place where batched writes are flushed.
public final class LoopCheck {
    private let handle: UnsafeMutablePointer<uv_check_t>
    private var action: (() -> Void)?
    private var closed = false

    public init(loop: EventLoop, _ action: @escaping () -> Void) {
        handle = allocateHandle(uv_check_t.self)
        self.action = action
        uv_check_init(loop.raw, handle)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_check_start(handle) { h in
            guard let h, let data = h.pointee.data else { return }
            Unmanaged<LoopCheck>.fromOpaque(data).takeUnretainedValue().action?()
        }
        // A check handle alone must not keep the loop alive.
        uv_unref(asHandle(handle))
    }

    /// Closing again does nothing (the handle's memory is freed once libuv has closed it).
    public func close() {
        guard !closed else { return }
        closed = true
        action = nil
        handle.pointee.data = nil
        uv_check_stop(handle)
        closeAndFree(handle)
    }
}
