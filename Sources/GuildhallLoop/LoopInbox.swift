// The one way into the loop from another thread: post values into a locked
// array and wake the loop with uv_async_send (documented thread-safe). The
// loop drains the whole array per wake-up, because libuv merges several
// sends into one callback.
//
// `LoopInbox` is the Sendable posting side; `InboxReceiver` is the loop-side
// handle. Posting after the receiver closed is a no-op: the flag and the
// uv_async_send share one lock, so a send never races the handle's close.

import CLibUV
import Synchronization

/// The address of the uv_async_t. libuv documents uv_async_send as safe
/// from any thread, and the lock in `LoopInbox` keeps it from outliving the handle.
struct AsyncHandleAddress: @unchecked Sendable {
    let handle: UnsafeMutablePointer<uv_async_t>
}

public final class LoopInbox<Item: Sendable>: Sendable {
    struct State: ~Copyable {
        var items: [Item] = []
        var handle: AsyncHandleAddress?
    }
    let state = Mutex(State())

    public init() {}

    /// Hands `item` to the loop; false when the loop side has closed.
    @discardableResult
    public func post(_ item: Item) -> Bool {
        state.withLock { s in
            guard let h = s.handle else { return false }
            s.items.append(item)
            uv_async_send(h.handle)
            return true
        }
    }

    func drain() -> [Item] {
        state.withLock { s in
            let items = s.items
            s.items = []
            return items
        }
    }
}

/// The non-generic target of the async callback (C callbacks cannot capture generics).
final class AsyncTarget {
    var action: (() -> Void)?
}

/// The loop side of a `LoopInbox`. Loop thread only.
public final class InboxReceiver<Item: Sendable> {
    private let handle: UnsafeMutablePointer<uv_async_t>
    private let inbox: LoopInbox<Item>
    private var handler: (([Item]) -> Void)?
    private let target = AsyncTarget()
    private var closed = false

    /// `keepsLoopAlive`: whether this handle alone keeps `uv_run` going.
    public init(loop: EventLoop, inbox: LoopInbox<Item>, keepsLoopAlive: Bool = false, _ handler: @escaping ([Item]) -> Void) {
        self.inbox = inbox
        self.handler = handler
        handle = allocateHandle(uv_async_t.self)
        uv_async_init(loop.raw, handle) { h in
            guard let h, let data = h.pointee.data else { return }
            Unmanaged<AsyncTarget>.fromOpaque(data).takeUnretainedValue().action?()
        }
        handle.pointee.data = Unmanaged.passUnretained(target).toOpaque()
        target.action = { [unowned self] in self.deliver() }
        if !keepsLoopAlive { uv_unref(asHandle(handle)) }
        inbox.state.withLock { $0.handle = AsyncHandleAddress(handle: handle) }
    }

    /// Delivers whatever is waiting now, without waiting for the wake-up.
    public func deliver() {
        let items = inbox.drain()
        if !items.isEmpty { handler?(items) }
    }

    /// Closing again does nothing (the handle's memory is freed once libuv has closed it).
    public func close() {
        guard !closed else { return }
        closed = true
        inbox.state.withLock { $0.handle = nil }
        deliver()
        handler = nil
        target.action = nil
        handle.pointee.data = nil
        closeAndFree(handle)
    }
}
