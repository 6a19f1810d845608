// Member roles and what each may do (MISSION §2, before permission bits).

/// A member's role in a server. Ordered: owner > admin > member.
public enum Role: Int, Sendable, Comparable, CaseIterable {
    case member = 1
    case admin = 2
    case owner = 3

    public static func < (a: Role, b: Role) -> Bool { a.rawValue < b.rawValue }

    /// Owner and admins manage channels and members.
    public var managesServer: Bool { self >= .admin }

    /// Whether this role may remove a member holding `target`: the owner may
    /// remove anyone but itself; an admin only plain members.
    public func mayKick(_ target: Role) -> Bool {
        switch self {
        case .owner: target != .owner
        case .admin: target == .member
        case .member: false
        }
    }
}
