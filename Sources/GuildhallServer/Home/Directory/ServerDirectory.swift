// The server directory (docs/features.md "Search"): servers their owners
// marked discoverable, found by name. Every home answers with its own
// listed servers that match, in the directory's order and no more than
// the page needs; the gateway merges the parts and cuts the page
// (GatherMerge.serverDirectory). A pure handler: the request and the
// home's listed servers in, the page or the failure out.

import Foundation
import GuildhallCore
import GuildhallWire

enum ServerDirectory {
    static let maxQuery = 100

    /// This home's part of a directory page: its listed servers whose names
    /// hold every word of the query (`info`: a server as the page shows it).
    static func page(_ r: GHSearchServers, listed: some Sequence<ServerRecord>,
                     info: (ServerRecord) -> GHServerInfo) throws(Failure) -> GHServerDirectory {
        guard r.query.count <= maxQuery else { throw Failure.badRequest("query is over \(maxQuery) characters") }
        let limit = r.limit == 0 ? Home.defaultSearchPage : Int(r.limit)
        guard limit <= Limits.maxPageSize else { throw Failure(.limitReached, "page size \(limit) is over the limit of \(Limits.maxPageSize)") }
        let words = r.query.split(whereSeparator: \.isWhitespace).map { folded(String($0)) }
        var page = GHServerDirectory()
        page.servers = listed
            .filter { record in let name = folded(record.name); return words.allSatisfy { name.contains($0) } }
            .map(info)
            .sorted(by: order)
            .prefix(Int(min(r.cursor, UInt64(Int.max / 2))) + limit + 1)
            .map { $0 }
        return page
    }

    /// Most members first, then the oldest, then by id.
    static func order(_ a: GHServerInfo, _ b: GHServerInfo) -> Bool {
        (b.memberCount, a.createdAt, a.serverID) < (a.memberCount, b.createdAt, b.serverID)
    }

    /// A name or query word without case or accents.
    static func folded(_ s: String) -> String { s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) }
}
