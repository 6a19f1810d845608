// Which handler serves which request. Loop thread only; the session is
// logged in and the request table's checks have passed.

import GuildhallCore
import GuildhallStore
import GuildhallWire

extension Home {
    func route(_ body: GHRequest.OneOf_Body, id: UInt64, from s: HomeSession) {
        loop.assertOnLoop()
        let rule = body.rule
        if !rule.needs.isEmpty, let scope = rule.scope {
            do throws(Failure) { try requirePermission(rule.needs, at: scope, for: s) } catch {
                s.fail(id, error)
                return
            }
        }
        switch body {
        case .login, .resume, .heartbeat, .ack, .logout:
            break  // the gateway answers these (Connections.swift)
        case .setReceivedStatus(let r): userHome.setReceivedStatus(r, id: id, from: s)
        case .getReceivedStatus(let r): userHome.getReceivedStatus(r, id: id, from: s)
        case .requestReceipt(let r): groupReceipts.requestReceipt(r, id: id, from: s)
        case .respondReceipts(let r): groupReceipts.respondReceipts(r, id: id, from: s)
        case .getReceiptReaders(let r): groupReceipts.getReceiptReaders(r, id: id, from: s)
        case .getReceiptInfo(let r): groupReceipts.getReceiptInfo(r, id: id, from: s)
        case .openConversation(let r): userHome.openConversation(r, id: id, from: s)
        case .listConversations: userHome.listConversations(id: id, from: s)
        case .sendDirectMessage(let r): userHome.sendDirectMessage(r, id: id, from: s)
        case .markDelivered(let r): userHome.markDelivered(r, id: id, from: s)
        case .sendReadReceipt(let r): userHome.sendReadReceipt(r, id: id, from: s)
        case .ackMessageRead(let r): userHome.ackMessageRead(r, id: id, from: s)
        case .ackConversationRead(let r): userHome.ackConversationRead(r, id: id, from: s)
        case .getSentStatus(let r): userHome.getSentStatus(r, id: id, from: s)
        case .createServer(let r): directoryRequests.createServer(r, id: id, from: s)
        case .updateServer(let r): directoryRequests.updateServer(r, id: id, from: s)
        case .deleteServer(let r): directoryRequests.deleteServer(r, id: id, from: s)
        case .getServers(let r): directoryRequests.getServers(r, id: id, from: s)
        case .listMyServers: directoryRequests.listMyServers(id: id, from: s)
        case .joinServer(let r): directoryRequests.joinServer(r, id: id, from: s)
        case .inviteMember(let r): directoryRequests.inviteMember(r, id: id, from: s)
        case .acceptInvite(let r): directoryRequests.acceptInvite(r, id: id, from: s)
        case .leaveServer(let r): directoryRequests.leaveServer(r, id: id, from: s)
        case .kickMember(let r): directoryRequests.kickMember(r, id: id, from: s)
        case .setMemberRole(let r): directoryRequests.setMemberRole(r, id: id, from: s)
        case .listMembers(let r): directoryRequests.listMembers(r, id: id, from: s)
        case .createChannel(let r): directoryRequests.createChannel(r, id: id, from: s)
        case .updateChannel(let r): directoryRequests.updateChannel(r, id: id, from: s)
        case .deleteChannel(let r): directoryRequests.deleteChannel(r, id: id, from: s)
        case .listChannels(let r): directoryRequests.listChannels(r, id: id, from: s)
        case .sendMessage(let r): sendMessage(SendRequest(r), id: id, from: s)
        case .getHistory(let r): getHistory(r, id: id, from: s)
        case .getMessages(let r): getMessages(r, id: id, from: s)
        case .subscribe(let r): subscriptions.subscribe(r, id: id, from: s)
        case .setSubscribeMode(let r): subscriptions.setSubscribeMode(r, id: id, from: s)
        case .markRead(let r): reading.markRead(r, id: id, from: s)
        case .getUnread(let r): reading.getUnread(r, id: id, from: s)
        case .sendTyping(let r): typing.sendTyping(r, id: id, from: s)
        case .enterAsGuest(let r): directoryRequests.enterAsGuest(r, id: id, from: s)
        case .leaveAsGuest(let r): directoryRequests.leaveAsGuest(r, id: id, from: s)
        case .banMember(let r): directoryRequests.banMember(r, id: id, from: s)
        case .unbanMember(let r): directoryRequests.unbanMember(r, id: id, from: s)
        case .createRole(let r): directoryRequests.createRole(r, id: id, from: s)
        case .updateRole(let r): directoryRequests.updateRole(r, id: id, from: s)
        case .deleteRole(let r): directoryRequests.deleteRole(r, id: id, from: s)
        case .grantRole(let r): directoryRequests.grantRole(r, id: id, from: s)
        case .takeBackRole(let r): directoryRequests.takeBackRole(r, id: id, from: s)
        case .setPermissionOverride(let r): directoryRequests.setPermissionOverride(r, id: id, from: s)
        case .listRoles(let r): directoryRequests.listRoles(r, id: id, from: s)
        case .getPermissions(let r): directoryRequests.getPermissions(r, id: id, from: s)
        case .recallMessage(let r): messageOperations.recall(r, id: id, from: s)
        case .editMessage(let r): messageOperations.edit(r, id: id, from: s)
        case .deleteMessage(let r): messageOperations.delete(r, id: id, from: s)
        case .addReaction(let r): messageOperations.addReaction(r, id: id, from: s)
        case .removeReaction(let r): messageOperations.removeReaction(r, id: id, from: s)
        case .getThread(let r): getThread(r, id: id, from: s)
        }
    }

    /// The one permission check, before any handler: the request table names
    /// the bits, handlers add the ones their content needs (a send's
    /// mentions). A guest is never a member: read-only where it may look.
    func requirePermission(_ needed: Permission, at scope: PermissionScope, for s: HomeSession) throws(Failure) {
        let server: ServerID? = switch scope {
        case .server(let id): id
        case .channel(let id): directory.channel(id)?.serverID
        }
        if let server, s.guestOf.contains(server) { throw Failure.forbidden("guests are read-only in server \(server)") }
        try directory.require(needed, of: s.user, at: scope)
    }
}
