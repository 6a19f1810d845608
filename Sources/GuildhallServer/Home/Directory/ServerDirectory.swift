// The server directory (docs/features.md "Search"): servers their owners
// marked discoverable, found by name. Every home answers with its own
// listed servers that match, in the directory's order and no more than
// the page needs; the gateway merges the parts and cuts the page
// (GatherMerge.serverDirectory). Loop thread only.

import Foundation
import GuildhallCore
import GuildhallWire

extension Home {
    static let maxDirectoryQuery = 100

    func searchServers(_ r: GHSearchServers, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            guard r.query.count <= Self.maxDirectoryQuery else { throw Failure.badRequest("query is over \(Self.maxDirectoryQuery) characters") }
            let limit = r.limit == 0 ? Self.defaultSearchPage : Int(r.limit)
            guard limit <= Limits.maxPageSize else { throw Failure(.limitReached, "page size \(limit) is over the limit of \(Limits.maxPageSize)") }
            let words = r.query.split(whereSeparator: \.isWhitespace).map { Self.folded(String($0)) }
            var page = GHServerDirectory()
            page.servers = directory.discoverableServers()
                .filter { record in let name = Self.folded(record.name); return words.allSatisfy { name.contains($0) } }
                .map(directoryRequests.info)
                .sorted(by: Self.directoryOrder)
                .prefix(Int(min(r.cursor, UInt64(Int.max / 2))) + limit + 1)
                .map { $0 }
            s.respond(id, .serverDirectory(page))
        }
    }

    /// Most members first, then the oldest, then by id.
    static func directoryOrder(_ a: GHServerInfo, _ b: GHServerInfo) -> Bool {
        (b.memberCount, a.createdAt, a.serverID) < (a.memberCount, b.createdAt, b.serverID)
    }

    /// A name or query word without case or accents.
    static func folded(_ s: String) -> String { s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil) }
}
