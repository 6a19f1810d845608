// The typed calls of the SDK, one per request of Proto/. Each returns the
// answer's payload or throws the server's error.

import GuildhallWire

extension GuildhallClient {
    func expect<T>(_ body: GHRequest.OneOf_Body, _ pick: (GHResponse.OneOf_Result) -> T?) async throws -> T {
        let result = try await call(body)
        guard let value = pick(result) else {
            throw GuildhallError(code: .internal, message: "unexpected answer \(result) to \(body)")
        }
        return value
    }

    func expectOK(_ body: GHRequest.OneOf_Body) async throws {
        _ = try await expect(body) { if case .ok = $0 { return () } else { return nil } }
    }

    private func server(_ body: GHRequest.OneOf_Body) async throws -> GHServerInfo {
        try await expect(body) { if case .server(let s) = $0 { s } else { nil } }
    }

    func member(_ body: GHRequest.OneOf_Body) async throws -> GHMember {
        try await expect(body) { if case .member(let m) = $0 { m } else { nil } }
    }

    private func channel(_ body: GHRequest.OneOf_Body) async throws -> GHChannelInfo {
        try await expect(body) { if case .channel(let c) = $0 { c } else { nil } }
    }

    // MARK: Servers

    public func createServer(name: String, icon: String = "", custom: String = "", openJoin: Bool = true,
                             allowGuests: Bool = false, discoverable: Bool = false) async throws -> GHServerInfo {
        var r = GHCreateServer()
        r.name = name; r.icon = icon; r.custom = custom; r.openJoin = openJoin; r.allowGuests = allowGuests; r.discoverable = discoverable
        return try await server(.createServer(r))
    }

    /// `iconFileID`: an image uploaded `to: .serverIcon(id)`; the icon becomes a lasting link to it.
    public func updateServer(_ id: UInt64, name: String? = nil, icon: String? = nil, iconFileID: UInt64? = nil, custom: String? = nil,
                             openJoin: Bool? = nil, allowGuests: Bool? = nil, discoverable: Bool? = nil) async throws -> GHServerInfo {
        var r = GHUpdateServer()
        r.serverID = id
        if let iconFileID { r.iconFileID = iconFileID }
        if let discoverable { r.discoverable = discoverable }
        if let allowGuests { r.allowGuests = allowGuests }
        if let name { r.name = name }
        if let icon { r.icon = icon }
        if let custom { r.custom = custom }
        if let openJoin { r.openJoin = openJoin }
        return try await server(.updateServer(r))
    }

    /// Hands a server you own to another member; you keep the `admin` role. Returns the server.
    public func transferOwnership(_ server: UInt64, to user: String) async throws -> GHServerInfo {
        var r = GHTransferOwnership()
        r.serverID = server
        r.userID = user
        return try await self.server(.transferOwnership(r))
    }

    public func deleteServer(_ id: UInt64) async throws {
        var r = GHDeleteServer()
        r.serverID = id
        try await expectOK(.deleteServer(r))
    }

    public func servers(_ ids: [UInt64]) async throws -> [GHServerInfo] {
        var r = GHGetServers()
        r.serverIds = ids
        return try await expect(.getServers(r)) { if case .servers(let l) = $0 { l.servers } else { nil } }
    }

    public func myServers() async throws -> [GHServerInfo] {
        try await expect(.listMyServers(GHListMyServers())) { if case .servers(let l) = $0 { l.servers } else { nil } }
    }

    // MARK: Members

    public func joinServer(_ id: UInt64) async throws -> GHMember {
        var r = GHJoinServer()
        r.serverID = id
        return try await member(.joinServer(r))
    }

    public func invite(_ user: String, to server: UInt64) async throws {
        var r = GHInviteMember()
        r.serverID = server; r.userID = user
        try await expectOK(.inviteMember(r))
    }

    public func acceptInvite(_ server: UInt64) async throws -> GHMember {
        var r = GHAcceptInvite()
        r.serverID = server
        return try await member(.acceptInvite(r))
    }

    public func leaveServer(_ id: UInt64) async throws {
        var r = GHLeaveServer()
        r.serverID = id
        try await expectOK(.leaveServer(r))
    }

    /// `reason`: for the server's audit log.
    public func kick(_ user: String, from server: UInt64, reason: String = "") async throws {
        var r = GHKickMember()
        r.serverID = server; r.userID = user; r.reason = reason
        try await expectOK(.kickMember(r))
    }

    public func setRole(_ role: GHRole, of user: String, in server: UInt64) async throws -> GHMember {
        var r = GHSetMemberRole()
        r.serverID = server; r.userID = user; r.role = role
        return try await member(.setMemberRole(r))
    }

    /// Every member of a server, in list order (page by page; `memberPage` for one page, counts and watching).
    public func members(of server: UInt64) async throws -> [GHMember] {
        var all: [GHMember] = []
        var cursor = ""
        repeat {
            let page = try await memberPage(of: server, cursor: cursor, limit: 1_000)
            all += page.members
            cursor = page.nextCursor
        } while !cursor.isEmpty
        return all
    }

    /// One page of a server's member list, with the member and online counts; `watch` watches its window
    /// (`GuildhallListener.onMemberListUpdate`, and the presence of the members in it).
    /// `query`: only members whose shown name has a word starting with it, or whose id does (not watched).
    public func memberPage(of server: UInt64, cursor: String = "", limit: Int = 100, role: UInt64 = 0, onlineOnly: Bool = false,
                           watch: Bool = false, query: String = "") async throws -> GHMemberList {
        var r = GHListMembers()
        r.serverID = server
        r.query = query
        r.cursor = cursor
        r.limit = UInt32(clamping: limit)
        r.roleID = role
        r.onlineOnly = onlineOnly
        r.watch = watch
        return try await expect(.listMembers(r)) { if case .members(let l) = $0 { l } else { nil } }
    }

    /// Ends this session's watch of a server's member list.
    public func stopWatchingMembers(of server: UInt64) async throws {
        var r = GHListMembers()
        r.serverID = server
        r.stopWatching = true
        _ = try await call(.listMembers(r))
    }

    // MARK: Channels

    public func createChannel(in server: UInt64, name: String, topic: String = "", custom: String = "",
                              guestVisibility: GHGuestVisibility = .followServer) async throws -> GHChannelInfo {
        var r = GHCreateChannel()
        r.serverID = server; r.name = name; r.topic = topic; r.custom = custom; r.guestVisibility = guestVisibility
        return try await channel(.createChannel(r))
    }

    public func updateChannel(_ id: UInt64, name: String? = nil, topic: String? = nil, custom: String? = nil,
                              guestVisibility: GHGuestVisibility? = nil, slowModeSeconds: UInt32? = nil) async throws -> GHChannelInfo {
        var r = GHUpdateChannel()
        r.channelID = id
        if let slowModeSeconds { r.slowModeSeconds = slowModeSeconds }
        if let guestVisibility { r.guestVisibility = guestVisibility }
        if let name { r.name = name }
        if let topic { r.topic = topic }
        if let custom { r.custom = custom }
        return try await channel(.updateChannel(r))
    }

    public func deleteChannel(_ id: UInt64) async throws {
        var r = GHDeleteChannel()
        r.channelID = id
        try await expectOK(.deleteChannel(r))
    }

    public func channels(of server: UInt64) async throws -> [GHChannelInfo] {
        var r = GHListChannels()
        r.serverID = server
        return try await expect(.listChannels(r)) { if case .channels(let l) = $0 { l.channels } else { nil } }
    }

    // MARK: Messages

    /// Sends text; returns the stored message (UID, seq, sentTime assigned by the server).
    /// `replyTo`: a message of the channel this one answers; `threadRoot`: the thread it joins;
    /// `attachments`: files uploaded for this channel (`createUpload`), whose bytes arrived (the text may then be empty).
    public func send(_ text: String, to channel: UInt64, mentions: [String] = [], mentionAll: Bool = false,
                     needReceipt: Bool = false, clientID: String = "", replyTo: UInt64 = 0, threadRoot: UInt64 = 0,
                     attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var body = GHMessageBody()
        body.text = text
        return try await send(body, to: channel, mentions: mentions, mentionAll: mentionAll, needReceipt: needReceipt, clientID: clientID,
                              replyTo: replyTo, threadRoot: threadRoot, attachments: attachments)
    }

    public func send(_ body: GHMessageBody, to channel: UInt64, mentions: [String] = [], mentionAll: Bool = false,
                     needReceipt: Bool = false, clientID: String = "", replyTo: UInt64 = 0, threadRoot: UInt64 = 0,
                     attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var r = GHSendMessage()
        r.channelID = channel; r.body = body; r.mentions = mentions; r.mentionAll = mentionAll
        r.needReceipt = needReceipt; r.clientID = clientID; r.replyTo = replyTo; r.threadRoot = threadRoot
        r.attachments = attachments
        return try await expect(.sendMessage(r)) { if case .message(let m) = $0 { m } else { nil } }
    }

    /// A page of history: messages older than `before` (0 = newest), in ascending seq order.
    public func history(of channel: UInt64, before seq: UInt64 = 0, limit: UInt32 = 50) async throws -> GHMessagePage {
        try await history(of: channel, seq: seq, direction: .before, limit: limit)
    }

    /// A page of history: messages newer than `after` (0 = oldest), in ascending seq order.
    public func history(of channel: UInt64, after seq: UInt64, limit: UInt32 = 50) async throws -> GHMessagePage {
        try await history(of: channel, seq: seq, direction: .after, limit: limit)
    }

    private func history(of channel: UInt64, seq: UInt64, direction: GHHistoryDirection, limit: UInt32) async throws -> GHMessagePage {
        var r = GHGetHistory()
        r.channelID = channel; r.seq = seq; r.direction = direction; r.limit = limit
        return try await expect(.getHistory(r)) { if case .messages(let p) = $0 { p } else { nil } }
    }

    public func messages(_ uids: [UInt64]) async throws -> [GHChannelMessage] {
        var r = GHGetMessages()
        r.uids = uids
        return try await expect(.getMessages(r)) { if case .messages(let p) = $0 { p.messages } else { nil } }
    }

    public func heartbeat() async throws -> UInt64 {
        try await expect(.heartbeat(GHHeartbeat())) { if case .pong(let p) = $0 { p.serverTime } else { nil } }
    }
}

// MARK: Received status (docs/features.md)

extension GuildhallClient {
    /// Turns on received-status flags of messages for this user on every device.
    @discardableResult
    public func setReceivedStatus(_ uids: [UInt64], read: Bool = false, listened: Bool = false, downloaded: Bool = false,
                                  retrieved: Bool = false) async throws -> [GHReceivedStatus] {
        var r = GHSetReceivedStatus()
        r.messageUids = uids
        r.isRead = read; r.isListened = listened; r.isDownloaded = downloaded; r.isRetrieved = retrieved
        let result = try await call(.setReceivedStatus(r))
        guard case .receivedStatuses(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.statuses
    }

    /// This user's received status of messages, in the order asked.
    public func receivedStatus(_ uids: [UInt64]) async throws -> [GHReceivedStatus] {
        var r = GHGetReceivedStatus()
        r.messageUids = uids
        let result = try await call(.getReceivedStatus(r))
        guard case .receivedStatuses(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.statuses
    }
}

// MARK: Group read receipts (docs/features.md)

extension GuildhallClient {
    private func receipts(_ body: GHRequest.OneOf_Body) async throws -> [GHReceiptInfo] {
        let result = try await call(body)
        guard case .receipts(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.receipts
    }

    /// Asks the channel's members for read receipts on my message.
    @discardableResult
    public func requestReceipt(_ messageUID: UInt64) async throws -> GHReceiptInfo {
        var r = GHRequestReceipt()
        r.messageUid = messageUID
        return try await receipts(.requestReceipt(r))[0]
    }

    /// Says I read these messages of one channel; returns their receipt info.
    @discardableResult
    public func respondReceipts(channel: UInt64, _ messageUIDs: [UInt64]) async throws -> [GHReceiptInfo] {
        var r = GHRespondReceipts()
        r.channelID = channel
        r.messageUids = messageUIDs
        return try await receipts(.respondReceipts(r))
    }

    /// A page of a message's readers, newest first (requester only); pass `next_cursor` for the next page.
    public func receiptReaders(of messageUID: UInt64, cursor: UInt64 = 0, limit: UInt32 = 100) async throws -> GHReceiptReaders {
        var r = GHGetReceiptReaders()
        r.messageUid = messageUID
        r.cursor = cursor
        r.limit = limit
        let result = try await call(.getReceiptReaders(r))
        guard case .readers(let page) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return page
    }

    /// Receipt info of messages as I see them, in the order asked.
    public func receiptInfo(_ messageUIDs: [UInt64]) async throws -> [GHReceiptInfo] {
        var r = GHGetReceiptInfo()
        r.messageUids = messageUIDs
        return try await receipts(.getReceiptInfo(r))
    }
}

// MARK: Direct conversations (docs/features.md)

extension GuildhallClient {
    func conversation(_ body: GHRequest.OneOf_Body) async throws -> GHConversation {
        let result = try await call(body)
        guard case .conversation(let c) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return c
    }

    /// Opens (or gets) the direct conversation with `peer`.
    public func openConversation(with peer: String) async throws -> GHConversation {
        var r = GHOpenConversation()
        r.peerID = peer
        return try await conversation(.openConversation(r))
    }

    /// My direct conversations, newest activity first.
    public func conversations() async throws -> [GHConversation] {
        let result = try await call(.listConversations(GHListConversations()))
        guard case .conversations(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.conversations
    }

    /// Sends a direct message; returns it as stored (status SENT). `attachments`: files uploaded for this conversation.
    public func sendDirect(_ text: String, to peer: String, clientID: String = "", replyTo: UInt64 = 0,
                           threadRoot: UInt64 = 0, attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var body = GHMessageBody()
        body.text = text
        return try await sendDirect(body, to: peer, clientID: clientID, replyTo: replyTo, threadRoot: threadRoot, attachments: attachments)
    }

    public func sendDirect(_ body: GHMessageBody, to peer: String, clientID: String = "", replyTo: UInt64 = 0,
                           threadRoot: UInt64 = 0, attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var r = GHSendDirectMessage()
        r.peerID = peer; r.body = body; r.clientID = clientID; r.replyTo = replyTo; r.threadRoot = threadRoot
        r.attachments = attachments
        return try await sendDirect(r)
    }

    func sendDirect(_ r: GHSendDirectMessage) async throws -> GHChannelMessage {
        let result = try await call(.sendDirectMessage(r))
        guard case .message(let m) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return m
    }

    /// I read the peer's messages sent at or before `time` (0: now).
    @discardableResult
    public func sendReadReceipt(conversation: UInt64, time: UInt64 = 0) async throws -> GHConversation {
        var r = GHSendReadReceipt()
        r.conversationID = conversation; r.time = time
        return try await self.conversation(.sendReadReceipt(r))
    }

    /// I read this one direct message.
    public func ackMessageRead(_ messageUID: UInt64) async throws {
        var r = GHAckMessageRead()
        r.messageUid = messageUID
        let result = try await call(.ackMessageRead(r))
        guard case .ok = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
    }

    /// I read the whole conversation: its unread count goes to 0.
    @discardableResult
    public func ackConversationRead(_ conversation: UInt64) async throws -> GHConversation {
        var r = GHAckConversationRead()
        r.conversationID = conversation
        return try await self.conversation(.ackConversationRead(r))
    }

    /// Where my direct messages are (SENT, DELIVERED, READ), in the order asked.
    public func sentStatus(_ messageUIDs: [UInt64]) async throws -> [GHSentStatus] {
        var r = GHGetSentStatus()
        r.messageUids = messageUIDs
        let result = try await call(.getSentStatus(r))
        guard case .sentStatuses(let list) = result else { throw GuildhallError(code: .internal, message: "unexpected answer \(result)") }
        return list.statuses.map(\.status)
    }
}
