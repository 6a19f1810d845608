// A server's members in list order (docs/features.md "Member lists"): the
// owner first, then by highest role (its position), then by name, then by
// user id, so the order is total and a page's last entry is a cursor that
// stays meaningful while members join and leave around it.
//
// The order is kept sorted as members change (a binary search and one move
// of the array's tail per change) so a page of a 100k-member server is a
// binary search and a walk of the page, never a sort. Cursors are the key
// of the entry before the page, written as text. Pure.

import Foundation

/// Where a member stands in the list.
public struct MemberListKey: Sendable, Hashable, Comparable {
    /// Higher is earlier: the owner `.max`, others their highest role's position.
    public let rank: UInt64
    public let name: String
    public let user: UserID

    public init(rank: UInt64, name: String, user: UserID) {
        self.rank = rank
        self.name = name
        self.user = user
    }

    public static func < (a: MemberListKey, b: MemberListKey) -> Bool {
        if a.rank != b.rank { return a.rank > b.rank }
        if a.name != b.name { return a.name < b.name }
        return a.user < b.user
    }

    /// The key as a page cursor.
    public var cursor: String {
        "\(rank).\(Data(name.utf8).base64EncodedString()).\(Data(user.utf8).base64EncodedString())"
    }

    /// The key a cursor names; nil when it is not one.
    public init?(cursor: String) {
        let parts = cursor.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let rank = UInt64(parts[0]),
              let name = Data(base64Encoded: String(parts[1])).flatMap({ String(data: $0, encoding: .utf8) }),
              let user = Data(base64Encoded: String(parts[2])).flatMap({ String(data: $0, encoding: .utf8) }) else { return nil }
        self.init(rank: rank, name: name, user: user)
    }
}

extension MemberListKey {
    /// `m`'s place in its server's list, as `directory` ranks it.
    public init(_ m: MemberRecord, in directory: Directory) {
        self.init(rank: m.rank(among: directory.servers[m.serverID]?.permissions.roles), name: m.listName, user: m.userID)
    }
}

/// One server's members, sorted.
public struct MemberOrder: Sendable {
    public private(set) var keys: [MemberListKey] = []
    private var keyOf: [UserID: MemberListKey] = [:]

    public init(_ members: [MemberListKey]) {
        keys = members.sorted()
        keyOf.reserveCapacity(keys.count)
        for k in keys { keyOf[k.user] = k }
    }

    /// Every member of `server` in `directory` at their place, reading the roles once.
    public init(of server: ServerID, in directory: Directory) {
        guard let state = directory.servers[server] else {
            self.init([])
            return
        }
        let roles = state.permissions.roles
        self.init(state.members.values.map { MemberListKey(rank: $0.rank(among: roles), name: $0.listName, user: $0.userID) })
    }

    public var count: Int { keys.count }

    public func key(of user: UserID) -> MemberListKey? { keyOf[user] }

    /// Where `key` is, or would go.
    private func position(of key: MemberListKey) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) / 2
            if keys[mid] < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// Adds or moves a member; returns its key before, if any.
    @discardableResult
    public mutating func set(_ key: MemberListKey) -> MemberListKey? {
        let old = remove(key.user)
        keys.insert(key, at: position(of: key))
        keyOf[key.user] = key
        return old
    }

    @discardableResult
    public mutating func remove(_ user: UserID) -> MemberListKey? {
        guard let old = keyOf.removeValue(forKey: user) else { return nil }
        keys.remove(at: position(of: old))
        return old
    }

    /// Up to `limit` members after `cursor` (nil: from the start) that
    /// `include` keeps; the cursor of the next page, nil when the walk reached the end.
    public func page(after cursor: MemberListKey?, limit: Int, where include: (MemberListKey) -> Bool = { _ in true }) -> ([MemberListKey], next: MemberListKey?) {
        var i = 0
        if let c = cursor {
            // After the cursor's member, or where it stood if it left since.
            i = position(of: c)
            if i < keys.count && keys[i] == c { i += 1 }
        }
        var out: [MemberListKey] = []
        while i < keys.count && out.count < limit {
            if include(keys[i]) { out.append(keys[i]) }
            i += 1
        }
        return (out, i < keys.count ? out.last : nil)
    }
}

/// A window of a member list a session watches: after `from` (nil: the
/// start) through `through` (nil: the end of the list). Pure.
public struct MemberWindow: Sendable, Equatable {
    public let from: MemberListKey?
    public let through: MemberListKey?
    public let role: UInt64
    public let onlineOnly: Bool

    public init(from: MemberListKey?, through: MemberListKey?, role: UInt64 = 0, onlineOnly: Bool = false) {
        self.from = from
        self.through = through
        self.role = role
        self.onlineOnly = onlineOnly
    }

    /// Whether a member at `key` falls in the window's range (its filters aside).
    public func covers(_ key: MemberListKey) -> Bool {
        if let from, !(from < key) { return false }
        if let through, through < key { return false }
        return true
    }
}
