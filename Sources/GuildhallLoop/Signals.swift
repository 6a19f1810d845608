// Unix signals (SIGTERM, SIGINT, SIGHUP) delivered on the loop thread.

import CLibUV

public final class SignalWatcher {
    private let handle: UnsafeMutablePointer<uv_signal_t>
    private var action: ((Int32) -> Void)?
    private var closed = false

    public init(loop: EventLoop, signal: Int32, _ action: @escaping (Int32) -> Void) {
        handle = allocateHandle(uv_signal_t.self)
        self.action = action
        uv_signal_init(loop.raw, handle)
        handle.pointee.data = Unmanaged.passUnretained(self).toOpaque()
        uv_signal_start(handle, { h, signum in
            guard let h, let data = h.pointee.data else { return }
            Unmanaged<SignalWatcher>.fromOpaque(data).takeUnretainedValue().action?(signum)
        }, signal)
        uv_unref(asHandle(handle))
    }

    /// Closing again does nothing (the handle's memory is freed once libuv has closed it).
    public func close() {
        guard !closed else { return }
        closed = true
        action = nil
        handle.pointee.data = nil
        uv_signal_stop(handle)
        closeAndFree(handle)
    }
}
