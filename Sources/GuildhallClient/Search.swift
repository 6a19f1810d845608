// The SDK's search (docs/features.md "Search"): a server's messages, or a
// direct conversation's, newest first, a page at a time.

import GuildhallWire

/// Where a search looks.
public enum SearchScope: Sendable, Equatable {
    /// Every channel of the server one may read, or only `channel`.
    case server(UInt64, channel: UInt64 = 0)
    /// One of one's direct conversations, by its id.
    case conversation(UInt64)
}

/// What else a search asks besides its words.
public struct SearchFilters: Sendable, Equatable {
    /// Only this sender's messages.
    public var fromUser = ""
    /// Only messages that carry files.
    public var withAttachments = false
    /// Sent at or after, and before (ms; 0: no bound).
    public var afterTime: UInt64 = 0, beforeTime: UInt64 = 0

    public init(fromUser: String = "", afterTime: UInt64 = 0, beforeTime: UInt64 = 0, withAttachments: Bool = false) {
        self.fromUser = fromUser; self.afterTime = afterTime; self.beforeTime = beforeTime; self.withAttachments = withAttachments
    }
}

extension GuildhallClient.Messages {
    /// A page of messages matching `query` (words, "phrases", prefix*), newest
    /// first; pass the page's `nextCursor` as `cursor` for the next one.
    public func search(_ query: String, in scope: SearchScope, filters: SearchFilters = SearchFilters(), cursor: UInt64 = 0,
                       limit: UInt32 = 20) async throws -> GHSearchResults {
        var r = GHSearchMessages()
        switch scope {
        case .server(let server, let channel): r.serverID = server; r.channelID = channel
        case .conversation(let id): r.conversationID = id
        }
        r.query = query
        r.fromUser = filters.fromUser
        r.afterTime = filters.afterTime
        r.beforeTime = filters.beforeTime
        r.withAttachments = filters.withAttachments
        r.cursor = cursor
        r.limit = limit
        return try await client.expect(.searchMessages(r)) { if case .searchResults(let p) = $0 { p } else { nil } }
    }
}

extension GuildhallClient.Servers {
    /// A page of the server directory: listed servers whose names hold every word of `query`, most members first.
    public func search(_ query: String, cursor: UInt64 = 0, limit: UInt32 = 20) async throws -> GHServerDirectory {
        var r = GHSearchServers()
        r.query = query
        r.cursor = cursor
        r.limit = limit
        return try await client.expect(.searchServers(r)) { if case .serverDirectory(let d) = $0 { d } else { nil } }
    }
}
