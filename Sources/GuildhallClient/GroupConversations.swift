// Group conversations in the SDK (docs/features.md "Group conversations"):
// make one, change it, and write and type in a conversation named by its id.
// Its changes arrive as CONVERSATION_UPDATED notifications.

import GuildhallWire

extension GuildhallClient.Directs {
    /// Makes a group of you and `users` (2 to 9 others) with you as its owner.
    public func createGroup(named name: String, with users: [String], membersMayAdd: Bool = false) async throws -> GHConversation {
        var r = GHCreateGroupConversation()
        r.name = name; r.userIds = users; r.membersMayAdd = membersMayAdd
        return try await conversation(.createGroup(r))
    }

    /// Renames a group you own, or changes whether its members may add members.
    public func updateGroup(_ id: UInt64, name: String? = nil, membersMayAdd: Bool? = nil) async throws -> GHConversation {
        var r = GHUpdateGroupConversation()
        r.conversationID = id
        if let name { r.name = name }
        if let membersMayAdd { r.membersMayAdd = membersMayAdd }
        return try await conversation(.updateGroup(r))
    }

    public func addToGroup(_ id: UInt64, _ users: [String]) async throws -> GHConversation {
        var r = GHAddGroupMembers()
        r.conversationID = id; r.userIds = users
        return try await conversation(.addGroupMembers(r))
    }

    public func removeFromGroup(_ id: UInt64, _ user: String) async throws -> GHConversation {
        var r = GHRemoveGroupMember()
        r.conversationID = id; r.userID = user
        return try await conversation(.removeGroupMember(r))
    }

    public func leaveGroup(_ id: UInt64) async throws {
        var r = GHLeaveGroupConversation()
        r.conversationID = id
        try await client.expectOK(.leaveGroup(r))
    }

    /// Sends a direct message to a conversation you are in (a group's, or a pair's), by its id.
    public func send(_ text: String, inConversation id: UInt64, clientID: String = "", replyTo: UInt64 = 0,
                     threadRoot: UInt64 = 0, attachments: [UInt64] = []) async throws -> GHChannelMessage {
        var r = GHSendDirectMessage()
        r.conversationID = id; r.body.text = text; r.clientID = clientID; r.replyTo = replyTo; r.threadRoot = threadRoot
        r.attachments = attachments
        return try await send(r)
    }

    /// Says "typing" in a conversation you are in; its other members hear it.
    public func sendTyping(inConversation id: UInt64) async throws {
        var r = GHSendTyping()
        r.conversationID = id
        _ = try await client.call(.sendTyping(r))
    }
}
