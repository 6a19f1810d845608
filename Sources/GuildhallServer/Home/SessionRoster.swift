// The sessions a home has heard of but does not need yet (docs/architecture.md): a
// session opened at its user's home is announced to every home, but a home
// where the user is no member has nothing to deliver to it. Such a home
// keeps only this short entry, and turns every session of the user into a
// full `HomeSession` once the user is needed there (a request of theirs
// arrives, or they join one of its guilds), so a session costs a few dozen
// bytes, not a `HomeSession`, on each loop that does not serve it.
// Loop thread only.

import GuildhallCore

struct SessionRoster {
    struct Entry {
        var opened: OpenedSession
        var autoSubscribe: Bool
        var detachedSince: UInt64?
        var isBehind = false
    }

    private var entries: [UInt64: Entry] = [:]
    private var keysByUser: [UserID: [UInt64]] = [:]

    subscript(key: UInt64) -> Entry? {
        get { entries[key] }
        set {
            guard let newValue, entries[key] != nil else { return }
            entries[key] = newValue
        }
    }

    mutating func list(_ o: OpenedSession) {
        entries[o.key] = Entry(opened: o, autoSubscribe: o.autoSubscribe)
        keysByUser[o.user, default: []].append(o.key)
    }

    /// The user's listed sessions, no longer listed.
    mutating func take(_ user: UserID) -> [Entry] {
        guard let keys = keysByUser.removeValue(forKey: user) else { return [] }
        return keys.compactMap { entries.removeValue(forKey: $0) }
    }

    /// The listed sessions that `matches` picks by key and gateway life, with their users.
    func sessions(where matches: (UInt64, UInt64) -> Bool) -> [(key: UInt64, user: UserID)] {
        entries.compactMap { key, e in matches(key, e.opened.gatewayLife) ? (key, e.opened.user) : nil }
    }

    func lists(_ user: UserID) -> Bool { keysByUser[user] != nil }

    mutating func remove(_ key: UInt64) {
        guard let e = entries.removeValue(forKey: key) else { return }
        keysByUser[e.opened.user]?.removeAll { $0 == key }
        if keysByUser[e.opened.user]?.isEmpty == true { keysByUser.removeValue(forKey: e.opened.user) }
    }
}
