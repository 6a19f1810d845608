// A part of the loop's home with state of its own (the user home, group
// receipts, typing, subscriptions): it keeps its state and handlers, and
// reaches the rest of the home's state and its runner through `home`.
// Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

protocol HomePart: AnyObject {
    var home: Home { get }
}

extension HomePart {
    var settings: Settings { _read { yield home.settings } }
    var registry: SessionRegistry { home.registry }
    var runner: EffectRunner { home.runner }
    var log: ServerLog { home.log }
    /// Borrowed, not copied: parts read it in loops.
    var directory: Directory { _read { yield home.directory } }
    func now() -> UInt64 { home.now() }
    func read(_ request: ReadRequest, then: @escaping (ReadResult) -> Void) { home.runner.read(request, then: then) }
    func commit(_ writes: [StoreWrite], from session: HomeSession?, then: @escaping (StoreError?) -> Void) {
        home.runner.commit(writes, from: session, then: then)
    }
    func attempt(_ id: UInt64, _ s: HomeSession, _ body: () throws(Failure) -> Void) { home.attempt(id, s, body) }
}
