// The SDK's calls on sent messages (docs/features.md): recall, edit, delete,
// quick comments, threads, and history by time. Each answers with the
// message as it is now; everyone else who received it gets
// `GuildhallListener.onMessageUpdated`. `channel` is the channel or the
// direct conversation the message is in.

import GuildhallWire

extension GuildhallClient.Messages {
    private func updated(_ body: GHRequest.OneOf_Body) async throws -> GHChannelMessage {
        try await client.expect(body) { if case .message(let m) = $0 { m } else { nil } }
    }

    /// `reason`: for the server's audit log, when it is another member's message.
    public func recall(_ uid: UInt64, in channel: UInt64, reason: String = "") async throws -> GHChannelMessage {
        var r = GHRecallMessage()
        r.channelID = channel; r.messageUid = uid; r.reason = reason
        return try await updated(.recallMessage(r))
    }

    public func delete(_ uid: UInt64, in channel: UInt64, reason: String = "") async throws -> GHChannelMessage {
        var r = GHDeleteMessage()
        r.channelID = channel; r.messageUid = uid; r.reason = reason
        return try await updated(.deleteMessage(r))
    }

    public func edit(_ uid: UInt64, in channel: UInt64, text: String) async throws -> GHChannelMessage {
        var r = GHEditMessage()
        r.channelID = channel; r.messageUid = uid; r.body.text = text
        return try await updated(.editMessage(r))
    }

    /// Adds a quick comment of `type` (1 to 65535); adding one already there changes nothing.
    public func react(_ uid: UInt64, in channel: UInt64, type: UInt32) async throws -> GHChannelMessage {
        var r = GHAddReaction()
        r.channelID = channel; r.messageUid = uid; r.type = type
        return try await updated(.addReaction(r))
    }

    public func unreact(_ uid: UInt64, in channel: UInt64, type: UInt32) async throws -> GHChannelMessage {
        var r = GHRemoveReaction()
        r.channelID = channel; r.messageUid = uid; r.type = type
        return try await updated(.removeReaction(r))
    }

    /// Who reacted to a message with `type`: the first `limit` (at most 100), earliest first, and how many did.
    public func reactors(of uid: UInt64, in channel: UInt64, type: UInt32, limit: UInt32 = 20) async throws -> GHReactors {
        var r = GHListReactors()
        r.channelID = channel; r.messageUid = uid; r.type = type; r.limit = limit
        return try await client.expect(.listReactors(r)) { if case .reactors(let l) = $0 { l } else { nil } }
    }

    /// A page of a thread's replies, oldest first, after `afterSeq`.
    public func thread(_ root: UInt64, in channel: UInt64, afterSeq: UInt64 = 0, limit: UInt32 = 50) async throws -> GHMessagePage {
        var r = GHGetThread()
        r.channelID = channel; r.rootUid = root; r.afterSeq = afterSeq; r.limit = limit
        return try await client.expect(.getThread(r)) { if case .messages(let p) = $0 { p } else { nil } }
    }

    /// A page of history beside a time (ms): sent before it, or after it when `after`.
    public func history(of channel: UInt64, time: UInt64, after: Bool = false, limit: UInt32 = 50) async throws -> GHMessagePage {
        var r = GHGetHistory()
        r.channelID = channel; r.time = time; r.direction = after ? .after : .before; r.limit = limit
        return try await client.expect(.getHistory(r)) { if case .messages(let p) = $0 { p } else { nil } }
    }
}

extension GuildhallClient {
    // MARK: Pins
}

extension GuildhallClient.Messages {
    /// Pins a channel message (PIN_MESSAGES).
    public func pin(_ uid: UInt64, in channel: UInt64) async throws {
        var r = GHPinMessage()
        r.channelID = channel
        r.messageUid = uid
        try await client.expectOK(.pinMessage(r))
    }

    public func unpin(_ uid: UInt64, in channel: UInt64) async throws {
        var r = GHUnpinMessage()
        r.channelID = channel
        r.messageUid = uid
        try await client.expectOK(.unpinMessage(r))
    }

    /// A channel's pins, the last pinned first.
    public func pins(in channel: UInt64) async throws -> [GHPin] {
        var r = GHListPins()
        r.channelID = channel
        return try await client.expect(.listPins(r)) { if case .pins(let l) = $0 { l.pins } else { nil } }
    }
}
