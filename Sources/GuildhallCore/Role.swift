// A member's standing as the wire's `Role` shows it. What a member may do is
// decided by permission bits (Permissions.swift), not by this.

/// A member's role in a server, for display: owner, admin (holds the `admin` role) or member.
public enum Role: Int, Sendable, Codable, Comparable, CaseIterable {
    case member = 1
    case admin = 2
    case owner = 3

    public static func < (a: Role, b: Role) -> Bool { a.rawValue < b.rawValue }
}
