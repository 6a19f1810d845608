// Message search at the home that holds the messages (docs/features.md
// "Search"): a server's search at its guild's home, a conversation's at the
// home holding the conversation. The home decides which channels the caller
// may read now and the store searches only those, so a hidden channel's
// matches are never counted, shown or hinted at; a server, channel or
// conversation the caller may not read is answered as one that does not
// exist. Part of `MessageReads`. Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension MessageReads {

    func searchMessages(_ r: GHSearchMessages, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            guard settings.searchIndex == "on" else { throw Failure(.unavailable, "search is turned off on this server") }
            guard (r.serverID == 0) != (r.conversationID == 0) else {
                throw Failure.badRequest("name exactly one of server_id and conversation_id")
            }
            let channels = try searchableChannels(r, for: s)
            let query = try SearchQuery(r.query)
            let limit = r.limit == 0 ? Home.defaultSearchPage : Int(r.limit)
            guard limit <= Limits.maxPageSize else { throw Failure(.limitReached, "page size \(limit) is over the limit of \(Limits.maxPageSize)") }
            var search = MessageSearch(expression: query.expression, channels: channels, limit: limit, viewer: s.user,
                                       deadlineMillis: settings.searchDeadlineMs)
            search.sender = r.fromUser
            search.afterTime = r.afterTime
            search.withFiles = r.withAttachments
            search.beforeTime = r.beforeTime
            search.beforeUID = r.cursor
            read(.search(search)) { result in self.answerSearch(result, id: id, to: s) }
        }
    }

    /// The channels a search may look in: the one asked for, or every one of
    /// the server the caller may read (as a member, or a guest), or the conversation.
    private func searchableChannels(_ r: GHSearchMessages, for s: HomeSession) throws(Failure) -> [ChannelID] {
        if r.conversationID != 0 {
            guard userHome.directs[r.conversationID]?.includes(s.user) == true else { throw Failure.notFound("conversation \(r.conversationID) not found") }
            return [r.conversationID]
        }
        if !s.guestOf.contains(r.serverID) { _ = try directory.seen(by: s.user).server(r.serverID) }
        if r.channelID != 0 {
            let c = try services.readableChannel(r.channelID, for: s)
            guard c.serverID == r.serverID else { throw Failure.notFound("channel \(r.channelID) not found") }
            return [c.id]
        }
        return directory.channelIDs(of: r.serverID).filter { (try? services.readableChannel($0, for: s)) != nil }.sorted()
    }

    private func answerSearch(_ result: ReadResult, id: UInt64, to s: HomeSession) {
        if let error = result.error {
            if error.interrupted {
                return s.fail(id, Failure(.unavailable, "the search ran past its deadline of \(settings.searchDeadlineMs) ms; narrow it"))
            }
            log.error("search failed", ["error": error.description])
            return s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
        }
        var page = GHSearchResults()
        for (m, snippet) in zip(result.messages, result.snippets) {
            // Withheld from its recipient: only its sender finds it.
            if m.withheld && m.sender != s.user { continue }
            var hit = GHSearchHit()
            // The caller's access was decided when the search began; a message answers as get_messages shows it.
            hit.message = shown(m, s.user)
            hit.snippet = SearchText.snippetParts(snippet).map { part in
                var p = GHSnippetPart()
                p.text = part.text
                p.match = part.match
                return p
            }
            page.hits.append(hit)
        }
        if result.hasMore, let last = result.messages.last { page.nextCursor = last.uid }
        s.respond(id, .searchResults(page))
    }
}
