// A part of the loop's home with state of its own (the user home, group
// receipts, typing, subscriptions): it keeps its state and handlers, and
// reaches what every part shares through `services` (HomeServices.swift)
// and the few other parts it calls through references it is given.
// Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

protocol HomePart: AnyObject {
    var services: HomeServices { get }
}

extension HomePart {
    var settings: Settings { _read { yield services.settings } }
    var registry: SessionRegistry { services.registry }
    var runner: EffectRunner { services.runner }
    var log: ServerLog { services.log }
    /// Borrowed, not copied: parts read it in loops.
    var directory: Directory { _read { yield services.directory } }
    var book: SubscriptionBook {
        _read { yield services.book }
        _modify { yield &services.book }
    }
    var positions: ReadPositions {
        _read { yield services.positions }
        _modify { yield &services.positions }
    }
    var ids: UIDGenerator {
        _read { yield services.ids }
        _modify { yield &services.ids }
    }
    var recentSends: RecentSends {
        _read { yield services.recentSends }
        _modify { yield &services.recentSends }
    }
    func now() -> UInt64 { services.clock() }
    func read(_ request: ReadRequest, then: @escaping (ReadResult) -> Void) { services.runner.read(request, then: then) }
    func commit(_ writes: [StoreWrite], from session: HomeSession?, then: @escaping (StoreError?) -> Void) {
        services.runner.commit(writes, from: session, then: then)
    }
}
