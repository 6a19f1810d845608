// The client command's commands: name, parameters, help, and the SDK call
// each one makes. Interactive and JSON modes share this table.

import ArgumentParser
import GuildhallClient
import GuildhallWire
import SwiftProtobuf

struct CommandSpec {
    /// Positional parameters, in order.
    let params: [String]
    /// Optional named parameters (key=value in words mode).
    let options: [String]
    /// Whether the last positional parameter takes the rest of the line.
    let restIsText: Bool
    let help: String
    let run: (Args) async throws -> (any SwiftProtobuf.Message)?
}

struct Args {
    let values: [String: String]

    func string(_ name: String) throws -> String {
        guard let v = values[name], !v.isEmpty else { throw ValidationError("missing \(name)") }
        return v
    }
    func optional(_ name: String) -> String? { values[name] }
    func id(_ name: String) throws -> UInt64 {
        guard let v = UInt64(try string(name)) else { throw ValidationError("\(name) must be a number") }
        return v
    }
    func bool(_ name: String) -> Bool? { values[name].map { ["true", "1", "yes"].contains($0.lowercased()) } }
    func list(_ name: String) -> [String] {
        (values[name] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

struct CommandTable {
    let specs: [String: CommandSpec]
    let help: String

    init(client c: GuildhallClient) {
        func spec(_ params: [String], opts options: [String] = [], text: Bool = false, _ help: String,
                  _ run: @escaping (Args) async throws -> (any SwiftProtobuf.Message)?) -> CommandSpec {
            CommandSpec(params: params, options: options, restIsText: text, help: help, run: run)
        }
        let table: [(String, CommandSpec)] = [
            ("create-server", spec(["name"], opts: ["icon", "custom", "open_join", "allow_guests", "discoverable"], text: true, "create a server you own") { a in
                try await c.servers.create(name: a.string("name"), icon: a.optional("icon") ?? "", custom: a.optional("custom") ?? "",
                                           openJoin: a.bool("open_join") ?? true, allowGuests: a.bool("allow_guests") ?? false,
                                           discoverable: a.bool("discoverable") ?? false)
            }),
            ("update-server", spec(["server"], opts: ["name", "icon", "custom", "open_join", "allow_guests", "discoverable"], "change a server") { a in
                try await c.servers.update(a.id("server"), name: a.optional("name"), icon: a.optional("icon"),
                                           custom: a.optional("custom"), openJoin: a.bool("open_join"), allowGuests: a.bool("allow_guests"),
                                           discoverable: a.bool("discoverable"))
            }),
            ("delete-server", spec(["server"], "delete a server you own") { a in try await c.servers.delete(a.id("server")); return nil }),
            ("transfer-ownership", spec(["server", "user"], "hand a server you own to another member (you keep the admin role)") { a in
                try await c.servers.transferOwnership(a.id("server"), to: a.string("user"))
            }),
            ("servers", spec([], "list your servers") { _ in
                var l = GHServerList(); l.servers = try await c.servers.mine(); return l
            }),
            ("server", spec(["servers"], "get servers by id (comma separated)") { a in
                var l = GHServerList(); l.servers = try await c.servers.get(a.list("servers").compactMap(UInt64.init)); return l
            }),
            ("join", spec(["server"], "join an open server") { a in try await c.servers.join(a.id("server")) }),
            ("invite", spec(["server", "user"], "invite a user") { a in
                try await c.servers.invite(a.string("user"), to: a.id("server")); return nil
            }),
            ("accept", spec(["server"], "accept an invitation") { a in try await c.servers.acceptInvite(a.id("server")) }),
            ("leave", spec(["server"], "leave a server") { a in try await c.servers.leave(a.id("server")); return nil }),
            ("kick", spec(["server", "user"], opts: ["reason"], "remove a member (reason=…: for the audit log)") { a in
                try await c.members.kick(a.string("user"), from: a.id("server"), reason: a.optional("reason") ?? ""); return nil
            }),
            ("role", spec(["server", "user", "role"], "set a member's role: admin or member") { a in
                let role: GHRole = try a.string("role").lowercased() == "admin" ? .admin : .member
                return try await c.members.setRole(role, of: a.string("user"), in: a.id("server"))
            }),
            ("members", spec(["server"], opts: ["cursor", "limit", "role", "online", "watch"],
                             "a page of the member list, in list order, with counts (online=1, watch=1 to watch its window)") { a in
                try await c.members.page(of: a.id("server"), cursor: a.optional("cursor") ?? "", limit: Int(a.optional("limit") ?? "") ?? 100,
                                         role: UInt64(a.optional("role") ?? "") ?? 0, onlineOnly: a.optional("online") == "1",
                                         watch: a.optional("watch") == "1")
            }),
            ("create-channel", spec(["server", "name"], opts: ["topic", "custom"], text: true, "create a channel") { a in
                try await c.channels.create(in: a.id("server"), name: a.string("name"), topic: a.optional("topic") ?? "",
                                            custom: a.optional("custom") ?? "")
            }),
            ("update-channel", spec(["channel"], opts: ["name", "topic", "custom", "guests", "slow"],
                                    "change a channel (guests=visible|invisible|follow, slow=SECONDS between a member's messages)") { a in
                let guests: GHGuestVisibility? = switch a.optional("guests") {
                case "visible": .visible
                case "invisible": .invisible
                case "follow": .followServer
                default: nil
                }
                return try await c.channels.update(a.id("channel"), name: a.optional("name"), topic: a.optional("topic"),
                                                   custom: a.optional("custom"), guestVisibility: guests, slowModeSeconds: a.optional("slow").flatMap { UInt32($0) })
            }),
            ("delete-channel", spec(["channel"], "delete a channel") { a in try await c.channels.delete(a.id("channel")); return nil }),
            ("channels", spec(["server"], "list a server's channels") { a in
                var l = GHChannelList(); l.channels = try await c.channels.list(of: a.id("server")); return l
            }),
            ("send", spec(["channel", "text"], opts: ["mentions", "mention_all", "client_id", "need_receipt", "reply_to", "thread"], text: true,
                          "send a text message (reply_to=UID quotes one, thread=UID joins its thread)") { a in
                try await c.messages.send(a.string("text"), to: a.id("channel"), mentions: a.list("mentions"), mentionAll: a.bool("mention_all") ?? false,
                                          needReceipt: a.bool("need_receipt") ?? false, clientID: a.optional("client_id") ?? "",
                                          replyTo: a.optional("reply_to").flatMap(UInt64.init) ?? 0, threadRoot: a.optional("thread").flatMap(UInt64.init) ?? 0)
            }),
            ("history", spec(["channel"], opts: ["before", "after", "limit", "time"],
                             "page through history (before=SEQ or after=SEQ, or time=MS with after=1 for newer; limit=N)") { a in
                let limit = UInt32(a.optional("limit") ?? "") ?? 50
                if let time = a.optional("time").flatMap(UInt64.init) {
                    return try await c.messages.history(of: a.id("channel"), time: time, after: a.optional("after") != nil, limit: limit)
                }
                if let after = a.optional("after").flatMap(UInt64.init) {
                    return try await c.messages.history(of: a.id("channel"), after: after, limit: limit)
                }
                return try await c.messages.history(of: a.id("channel"), before: a.optional("before").flatMap(UInt64.init) ?? 0, limit: limit)
            }),
            ("search", spec(["server", "words"], opts: ["channel", "from", "after", "before", "cursor", "limit"], text: true,
                            "search a server's messages, newest first (words, \"phrases\", prefix*; channel=ID from=USER after=MS before=MS cursor=N)") { a in
                let filters = SearchFilters(fromUser: a.optional("from") ?? "", afterTime: a.optional("after").flatMap(UInt64.init) ?? 0,
                                            beforeTime: a.optional("before").flatMap(UInt64.init) ?? 0)
                return try await c.messages.search(a.string("words"), in: .server(a.id("server"), channel: a.optional("channel").flatMap(UInt64.init) ?? 0),
                                                   filters: filters, cursor: a.optional("cursor").flatMap(UInt64.init) ?? 0,
                                                   limit: a.optional("limit").flatMap(UInt32.init) ?? 20)
            }),
            ("directory", spec(["words"], opts: ["cursor", "limit"], text: true, "find servers listed in the directory by name (words may be empty)") { a in
                try await c.servers.search(a.optional("words") ?? "", cursor: a.optional("cursor").flatMap(UInt64.init) ?? 0,
                                           limit: a.optional("limit").flatMap(UInt32.init) ?? 20)
            }),
            ("search-conversation", spec(["conversation", "words"], opts: ["from", "cursor", "limit"], text: true,
                                         "search one of your direct conversations (by its id), newest first") { a in
                try await c.messages.search(a.string("words"), in: .conversation(a.id("conversation")), filters: SearchFilters(fromUser: a.optional("from") ?? ""),
                                            cursor: a.optional("cursor").flatMap(UInt64.init) ?? 0, limit: a.optional("limit").flatMap(UInt32.init) ?? 20)
            }),
            ("get", spec(["uids"], "get messages by UID (comma or space separated)") { a in
                var p = GHMessagePage(); p.messages = try await c.messages.get(a.list("uids").compactMap(UInt64.init)); return p
            }),
            ("subscribe", spec(["type", "server", "channels"], opts: ["op"],
                               "subscribe (op=unsubscribe to remove): type server_msg|channel_msg|unread_count|unread_status|typing|guest_channel|guest_server or 1-7, a server, channels (comma separated) for channel types") { a in
                guard let type = CommandTable.subscriptionType(try a.string("type")) else { throw ValidationError("unknown subscription type") }
                let op: GHSubscribeOperation = a.optional("op") == "unsubscribe" ? .unsubscribe : .subscribe
                let server = try a.id("server")
                var result = GHSubscribeResult()
                if type == .serverMsg || type == .guestServer {
                    result.results = try await c.subscriptions.subscribeServer(SubscribeServerParam(subscribeType: type, operationType: op, targets: [server]))
                } else {
                    let targets = a.list("channels").compactMap(UInt64.init).map { ChannelTarget(serverID: server, channelID: $0) }
                    result.results = try await c.subscriptions.subscribeChannel(SubscribeChannelParam(subscribeType: type, operationType: op, targets: targets))
                }
                return result
            }),
            ("mode", spec(["mode"], "subscription mode: auto or manual") { a in
                try await c.subscriptions.setAutoSubscribe(try a.string("mode") == "auto"); return nil
            }),
            ("read", spec(["channel"], opts: ["seq", "time"], "mark a channel read (seq=N: up to N; time=MS: what was sent by then; default: everything)") { a in
                try await c.messages.markRead(a.id("channel"), upTo: a.optional("seq").flatMap(UInt64.init) ?? 0,
                                              time: a.optional("time").flatMap(UInt64.init) ?? 0)
            }),
            ("recall", spec(["channel", "uid"], "recall a message (yours within the window, anyone's with the permission)") { a in
                try await c.messages.recall(a.id("uid"), in: a.id("channel"))
            }),
            ("edit", spec(["channel", "uid", "text"], text: true, "replace your message's text") { a in
                try await c.messages.edit(a.id("uid"), in: a.id("channel"), text: a.string("text"))
            }),
            ("delete", spec(["channel", "uid"], "delete a message (yours, or anyone's with the permission)") { a in
                try await c.messages.delete(a.id("uid"), in: a.id("channel"))
            }),
            ("react", spec(["channel", "uid", "type"], "add a quick comment of a type (1-65535)") { a in
                try await c.messages.react(a.id("uid"), in: a.id("channel"), type: UInt32(clamping: try a.id("type")))
            }),
            ("unreact", spec(["channel", "uid", "type"], "take your quick comment back") { a in
                try await c.messages.unreact(a.id("uid"), in: a.id("channel"), type: UInt32(clamping: try a.id("type")))
            }),
            ("reactors", spec(["channel", "uid", "type"], opts: ["limit"], "who reacted with a type, earliest first (limit=N, at most 100)") { a in
                try await c.messages.reactors(of: a.id("uid"), in: a.id("channel"), type: UInt32(clamping: try a.id("type")),
                                              limit: UInt32(a.optional("limit") ?? "") ?? 20)
            }),
            ("thread", spec(["channel", "root"], opts: ["after", "limit"], "page a thread's replies (after=SEQ)") { a in
                try await c.messages.thread(a.id("root"), in: a.id("channel"), afterSeq: a.optional("after").flatMap(UInt64.init) ?? 0,
                                            limit: UInt32(a.optional("limit") ?? "") ?? 50)
            }),
            ("unread", spec(["channels"], "unread info for channels (comma separated)") { a in
                var l = GHUnreadList(); l.unreads = try await c.messages.unread(a.list("channels").compactMap(UInt64.init)); return l
            }),
            ("set-status", spec(["uids"], opts: ["read", "listened", "downloaded", "retrieved"],
                                "turn on received-status flags of messages (comma separated UIDs) on all your devices, e.g. read=true") { a in
                var l = GHReceivedStatusList()
                l.statuses = try await c.messages.setReceivedStatus(a.list("uids").compactMap(UInt64.init), read: a.bool("read") ?? false,
                                                                    listened: a.bool("listened") ?? false, downloaded: a.bool("downloaded") ?? false,
                                                                    retrieved: a.bool("retrieved") ?? false)
                return l
            }),
            ("status", spec(["uids"], "your received status of messages (comma separated UIDs)") { a in
                var l = GHReceivedStatusList(); l.statuses = try await c.messages.receivedStatus(a.list("uids").compactMap(UInt64.init)); return l
            }),
            ("request-receipt", spec(["uid"], "ask the channel's members for read receipts on your message") { a in
                try await c.receipts.request(a.id("uid"))
            }),
            ("respond-receipts", spec(["channel", "uids"], "say you read messages of one channel (comma separated UIDs)") { a in
                var l = GHReceiptInfoList()
                l.receipts = try await c.receipts.respond(channel: a.id("channel"), a.list("uids").compactMap(UInt64.init))
                return l
            }),
            ("readers", spec(["uid"], opts: ["cursor", "limit"], "readers of your message, newest first (cursor=next_cursor for more)") { a in
                try await c.receipts.readers(of: a.id("uid"), cursor: a.optional("cursor").flatMap(UInt64.init) ?? 0,
                                             limit: a.optional("limit").flatMap(UInt32.init) ?? 100)
            }),
            ("receipts", spec(["uids"], "receipt info of messages (comma separated UIDs)") { a in
                var l = GHReceiptInfoList(); l.receipts = try await c.receipts.info(a.list("uids").compactMap(UInt64.init)); return l
            }),
            ("dm-open", spec(["user"], "open the direct conversation with a user") { a in try await c.directs.open(with: a.string("user")) }),
            ("dms", spec([], "list your direct conversations") { _ in
                var l = GHConversationList(); l.conversations = try await c.directs.list(); return l
            }),
            ("upload", spec(["channel", "path", "text"], opts: ["name", "type"], text: true,
                            "send a file to a channel, with text if any (name=SHOWN_NAME type=MEDIA/TYPE)") { a in
                let file = try await c.files.upload(contentsOf: a.string("path"), as: a.optional("name"), contentType: a.optional("type") ?? "",
                                                    to: .channel(a.id("channel")))
                return try await c.messages.send(a.optional("text") ?? "", to: a.id("channel"), attachments: [file])
            }),
            ("upload-dm", spec(["user", "path", "text"], opts: ["name", "type"], text: true, "send a file to a user, with text if any") { a in
                let file = try await c.files.upload(contentsOf: a.string("path"), as: a.optional("name"), contentType: a.optional("type") ?? "",
                                                    to: .conversation(with: a.string("user")))
                return try await c.directs.send(a.optional("text") ?? "", to: a.string("user"), attachments: [file])
            }),
            ("dm", spec(["user", "text"], opts: ["client_id"], text: true, "send a direct message") { a in
                try await c.directs.send(a.string("text"), to: a.string("user"), clientID: a.optional("client_id") ?? "")
            }),
            ("group-create", spec(["name", "users"], opts: ["members-may-add"], "make a group conversation with 2 to 9 others (comma separated ids)") { a in
                try await c.directs.createGroup(named: a.string("name"), with: a.list("users"), membersMayAdd: a.bool("members-may-add") ?? false)
            }),
            ("group-send", spec(["conversation", "text"], opts: ["client_id"], text: true, "send to a conversation by its id (a group's, or a pair's)") { a in
                try await c.directs.send(a.string("text"), inConversation: a.id("conversation"), clientID: a.optional("client_id") ?? "")
            }),
            ("group-rename", spec(["conversation", "name"], text: true, "rename a group you own") { a in
                try await c.directs.updateGroup(a.id("conversation"), name: a.string("name"))
            }),
            ("group-members-may-add", spec(["conversation", "allowed"], "let a group's members add members (true or false)") { a in
                try await c.directs.updateGroup(a.id("conversation"), membersMayAdd: a.bool("allowed") ?? false)
            }),
            ("group-add", spec(["conversation", "users"], "add users to a group (comma separated ids)") { a in
                try await c.directs.addToGroup(a.id("conversation"), a.list("users"))
            }),
            ("group-remove", spec(["conversation", "user"], "remove a member from a group you own") { a in
                try await c.directs.removeFromGroup(a.id("conversation"), a.string("user"))
            }),
            ("group-leave", spec(["conversation"], "leave a group") { a in try await c.directs.leaveGroup(a.id("conversation")); return nil }),
            ("dm-read", spec(["conversation"], opts: ["time"], "read receipt by time: the peer's messages up to time=MS (default now) are read") { a in
                try await c.directs.sendReadReceipt(conversation: a.id("conversation"), time: a.optional("time").flatMap(UInt64.init) ?? 0)
            }),
            ("dm-ack", spec(["uid"], "read receipt for one direct message") { a in try await c.directs.ackMessageRead(a.id("uid")); return nil }),
            ("dm-read-all", spec(["conversation"], "mark a whole direct conversation read") { a in
                try await c.directs.ackConversationRead(a.id("conversation"))
            }),
            ("sent-status", spec(["uids"], "where your direct messages are: SENT, DELIVERED, READ (comma separated UIDs)") { a in
                let uids = a.list("uids").compactMap(UInt64.init)
                var l = GHSentStatusList()
                l.statuses = zip(uids, try await c.directs.sentStatus(uids)).map { uid, status in
                    var st = GHMessageSentStatus(); st.messageUid = uid; st.status = status; return st
                }
                return l
            }),
            ("webhook-create", spec(["channel", "name"], opts: ["reason"], text: true,
                                    "make an incoming webhook for a channel (its secret and path are shown once)") { a in
                try await c.webhooks.create(in: a.id("channel"), name: a.string("name"), reason: a.optional("reason") ?? "")
            }),
            ("webhooks", spec(["channel"], "a channel's webhooks (without their secrets)") { a in
                var l = GHWebhookList(); l.webhooks = try await c.webhooks.list(in: a.id("channel")); return l
            }),
            ("webhook-delete", spec(["channel", "webhook"], opts: ["reason"], "delete a channel's webhook") { a in
                try await c.webhooks.delete(a.id("webhook"), in: a.id("channel"), reason: a.optional("reason") ?? ""); return nil
            }),
            ("pin", spec(["channel", "uid"], "pin a message") { a in try await c.messages.pin(a.id("uid"), in: a.id("channel")); return nil }),
            ("unpin", spec(["channel", "uid"], "unpin a message") { a in try await c.messages.unpin(a.id("uid"), in: a.id("channel")); return nil }),
            ("pins", spec(["channel"], "a channel's pins, the last pinned first") { a in
                var l = GHPinList(); l.pins = try await c.messages.pins(in: a.id("channel")); return l
            }),
            ("typing", spec(["channel"], "say you are typing in a channel") { a in try await c.messages.sendTyping(a.id("channel")); return nil }),
            ("typing-dm", spec(["peer"], "say you are typing to the peer of a direct conversation") { a in
                try await c.directs.sendTyping(to: a.string("peer")); return nil
            }),
            ("invite-code", spec(["server"], opts: ["channel", "max-age", "max-uses"], "make an invite code for a server") { a in
                try await c.invites.create(in: a.id("server"), channel: UInt64(a.optional("channel") ?? "") ?? 0,
                                             maxAgeSeconds: UInt64(a.optional("max-age") ?? "") ?? 0, maxUses: UInt32(a.optional("max-uses") ?? "") ?? 0)
            }),
            ("invite-codes", spec(["server"], "a server's live invite codes") { a in
                var l = GHInviteCodeList(); l.codes = try await c.invites.list(of: a.id("server")); return l
            }),
            ("revoke-invite", spec(["code"], "revoke an invite code") { a in try await c.invites.revoke(a.string("code")); return nil }),
            ("look-up-invite", spec(["code"], "what an invite code leads to") { a in try await c.invites.lookUp(a.string("code")) }),
            ("join-invite", spec(["code"], "join the server an invite code leads to") { a in try await c.invites.join(a.string("code")) }),
            ("presence", spec(["status"], opts: ["text"], "choose how you show: online, idle, dnd or invisible") { a in
                let status: GHPresenceStatus = switch try a.string("status").lowercased() {
                case "online": .presenceOnline
                case "idle": .presenceIdle
                case "dnd": .presenceDoNotDisturb
                case "invisible": .presenceInvisible
                default: throw ValidationError("status is one of online, idle, dnd, invisible")
                }
                return try await c.people.setPresence(status, text: a.optional("text") ?? "")
            }),
            ("watch", spec(["users"], "hear these users' presence (comma separated ids)") { a in
                var r = GHSubscribeResult(); r.results = try await c.people.watchPresence(a.list("users")); return r
            }),
            ("unwatch", spec(["users"], "stop hearing these users' presence") { a in
                var r = GHSubscribeResult(); r.results = try await c.people.watchPresence(a.list("users"), .unsubscribe); return r
            }),
            ("guest-enter", spec(["server"], "enter a server as a guest") { a in try await c.servers.enterAsGuest(a.id("server")) }),
            ("guest-leave", spec(["server"], "leave a server entered as a guest") { a in try await c.servers.leaveAsGuest(a.id("server")); return nil }),
            ("ban", spec(["server", "user"], opts: ["until", "reason"], "ban a user from a server (until=MS: until then)") { a in
                try await c.members.ban(a.string("user"), from: a.id("server"), until: UInt64(a.optional("until") ?? "") ?? 0, reason: a.optional("reason") ?? "")
                return nil
            }),
            ("timeout", spec(["server", "user", "until"], opts: ["reason"], "time a member out until MS since 1970 (0 lifts it)") { a in
                try await c.members.timeout(a.string("user"), in: a.id("server"), until: UInt64(try a.string("until")) ?? 0, reason: a.optional("reason") ?? "")
            }),
            ("unban", spec(["server", "user"], opts: ["reason"], "lift a ban") { a in
                try await c.members.unban(a.string("user"), from: a.id("server"), reason: a.optional("reason") ?? ""); return nil
            }),
            ("audit-log", spec(["server"], opts: ["actor", "action", "target", "before", "limit"],
                               "a server's audit log, newest first (action=member_kicked, channel_updated, …)") { a in
                var action = GHAuditAction.auditAny
                if let name = a.optional("action") {
                    guard let found = Self.auditActions.first(where: { $0.0 == name })?.1 else {
                        throw ValidationError("no audit action \(name); one of " + Self.auditActions.map(\.0).joined(separator: ", "))
                    }
                    action = found
                }
                return try await c.servers.auditLog(of: a.id("server"), before: UInt64(a.optional("before") ?? "") ?? 0,
                                                    limit: UInt32(a.optional("limit") ?? "") ?? 0, actor: a.optional("actor") ?? "", action: action,
                                                    target: a.optional("target") ?? "")
            }),
            ("profile", spec([], opts: ["name", "avatar"], "set your display name and avatar (\"\" clears one)") { a in
                try await c.people.setProfile(displayName: a.optional("name"), avatar: a.optional("avatar"))
            }),
            ("users", spec(["users"], "users' profiles (comma separated ids)") { a in
                var l = GHUserList(); l.users = try await c.people.profiles(a.list("users")); return l
            }),
            ("nickname", spec(["server", "nickname"], opts: ["user", "reason"], "set your nickname in a server (user=…: another's)") { a in
                try await c.members.setNickname(try a.string("nickname"), in: a.id("server"), of: a.optional("user") ?? "", reason: a.optional("reason") ?? "")
            }),
            ("push-register", spec(["token"], opts: ["platform", "previews"], "register this device's push token (previews=0: no message text)") { a in
                try await c.people.registerPushToken(try a.string("token"), platform: a.optional("platform") ?? "", previews: a.optional("previews") != "0")
                return nil
            }),
            ("push-unregister", spec([], "forget this device's push token") { _ in try await c.people.unregisterPushToken(); return nil }),
            ("block", spec(["user"], "block a user's direct messages and typing") { a in try await c.directs.block(try a.string("user")); return nil }),
            ("unblock", spec(["user"], "unblock a user") { a in try await c.directs.unblock(try a.string("user")); return nil }),
            ("dm-privacy", spec([], opts: ["from"], "whom you take direct messages from: from=server-mates or from=everyone to set it") { a in
                let only: Bool
                switch a.optional("from") {
                case nil: only = try await c.directs.directMessagePrivacy()
                case "server-mates": only = try await c.directs.setDirectMessagePrivacy(serverMatesOnly: true)
                case "everyone": only = try await c.directs.setDirectMessagePrivacy(serverMatesOnly: false)
                case let other?: throw ValidationError("from must be server-mates or everyone, not \(other)")
                }
                var p = GHDirectMessagePrivacy(); p.serverMatesOnly = only; return p
            }),
            ("blocked", spec([], "the users you block") { _ in var l = GHUserIDs(); l.userIds = try await c.directs.blockedUsers(); return l }),
            ("ping", spec([], "heartbeat; shows the server's clock") { _ in
                var p = GHPong(); p.serverTime = try await c.heartbeat(); return p
            }),
        ] + Self.roleCommands(c, spec)
        specs = Dictionary(uniqueKeysWithValues: table)
        help = (table.map { name, s in
            let params = s.params.map { "<\($0)>" } + s.options.map { "[\($0)=…]" }
            return "  \(name) \(params.joined(separator: " "))\n      \(s.help)"
        } + ["  help", "  quit"]).joined(separator: "\n")
    }

    /// The audit actions by their command-line names: member_kicked for AUDIT_MEMBER_KICKED.
    static let auditActions: [(String, GHAuditAction)] = GHAuditAction.allCases.dropFirst().map { action in
        let camel = "\(action)".dropFirst("audit".count)
        let snake = camel.reduce(into: "") { out, ch in out += ch.isUppercase ? (out.isEmpty ? "" : "_") + ch.lowercased() : String(ch) }
        return (snake, action)
    }

    static func subscriptionType(_ text: String) -> GHSubscriptionType? {
        if let n = Int(text) { return GHSubscriptionType(rawValue: n) }
        switch text.lowercased() {
        case "server_msg": return .serverMsg
        case "channel_msg": return .channelMsg
        case "unread_count": return .channelUnreadCount
        case "unread_status": return .channelUnreadStatus
        case "typing": return .channelTyping
        case "guest_channel": return .guestChannel
        case "guest_server": return .guestServer
        default: return nil
        }
    }

    func run(_ command: ParsedCommand) async throws -> (any SwiftProtobuf.Message)? {
        guard let spec = specs[command.name] else { throw ValidationError("unknown command \(command.name); type help") }
        return try await spec.run(Args(values: command.args))
    }
}
