// A member row's list of roles: role ids in ascending order, comma-separated
// ("" for none). A list on the row, not a table, because a member holds a
// few roles and is always read and written whole. Pure.

import GuildhallCore

enum MemberRows {
    static func text(_ roles: [RoleID]) -> String { roles.map(String.init).joined(separator: ",") }

    static func roles(_ text: String) -> [RoleID] { text.split(separator: ",").compactMap { RoleID($0) }.sorted() }
}
