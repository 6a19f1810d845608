// A gateway's logins with a JWT in flight: the token is verified off the loop
// (TokenKeys: jwt-kit's key collection is an actor, and an ES256 or EdDSA
// signature costs tens of microseconds a loop should not spend), and the
// outcome comes back through the loop's inbox (`LoopMessage.tokenChecked`) to
// the login that waits for it. Loop thread only, but for the verification.

import GuildhallCore

final class TokenChecks {
    typealias Outcome = Result<AccessToken, Failure>

    private let keys: TokenKeys
    /// Posts an outcome to this loop's inbox, from any thread.
    private let post: @Sendable (_ session: UInt64, Outcome) -> Void
    private var waiting: [UInt64: (Outcome) -> Void] = [:]

    init(keys: TokenKeys, post: @escaping @Sendable (UInt64, Outcome) -> Void) {
        self.keys = keys
        self.post = post
    }

    /// Verifies `text` for the session `key`; `then` runs on the loop with the outcome.
    func check(_ text: String, for key: UInt64, nowSeconds: UInt64, then: @escaping (Outcome) -> Void) {
        waiting[key] = then
        let keys = self.keys, post = self.post
        Task(executorPreference: TokenKeys.executor) { post(key, await keys.verify(text, nowSeconds: nowSeconds)) }
    }

    /// An outcome arrived (a session closed meanwhile was forgotten: nothing waits).
    func checked(_ key: UInt64, _ outcome: Outcome) { waiting.removeValue(forKey: key)?(outcome) }

    /// A session closed: its login no longer waits.
    func forget(_ key: UInt64) { waiting.removeValue(forKey: key) }
}
