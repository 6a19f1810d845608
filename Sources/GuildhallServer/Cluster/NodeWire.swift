// How the messages between loops travel between nodes (docs/cluster.md): the
// same values, as the field-numbered messages of Proto/node.proto, so a node
// reads what a node one version apart sends as long as fields are only
// added (`NodeWireTests` decodes committed messages of every kind). This
// file: the envelope and a gateway's commands for a home; NodeWireSteps.swift
// a home's steps for a gateway; NodeWireMail.swift mail between homes. Values only.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallWire

/// A node message this version cannot read.
struct NodeWireError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum NodeWire {
    /// `message` for loop `toLoop` of another node, from loop `fromLoop` of `fromNode`; nil for what stays in a node.
    static func envelope(_ message: LoopMessage, toLoop: Int, fromNode: Int) -> GHNodeEnvelope? {
        var e = GHNodeEnvelope()
        e.toLoop = UInt32(toLoop)
        e.fromNode = UInt32(fromNode)
        switch message {
        case .fromGateway(let from, let commands):
            e.fromLoop = UInt32(from)
            e.fromGateway.commands = commands.map(GHNodeHomeCommand.init)
        case .fromHome(let from, let steps):
            e.fromLoop = UInt32(from)
            e.fromHome.steps = steps.map(GHNodeGatewayStep.init)
        case .mail(let from, let mail):
            e.fromLoop = UInt32(from)
            e.mail.mail = mail.map(GHNodeHomeMail.init)
        default: return nil
        }
        return e
    }

    /// As the receiving loop takes it: the sender's loop becomes its place.
    static func loopMessage(_ e: GHNodeEnvelope) throws -> LoopMessage {
        let from = Place.remote(node: Int(e.fromNode), loop: Int(e.fromLoop))
        switch e.message {
        case .fromGateway(let c): return .fromGateway(from, try c.commands.map { try $0.value() })
        case .fromHome(let s): return .fromHome(from, try s.steps.map { try $0.value() })
        case .mail(let m): return .mail(from, try m.mail.map { try $0.value() })
        case nil: throw NodeWireError("a node message holds nothing")
        }
    }
}

extension GHNodeHomeCommand {
    init(_ c: HomeCommand) {
        self.init()
        switch c {
        case .admit(let a):
            admit = .with {
                $0.key = a.key; $0.user = a.token.user; $0.device = a.token.device; $0.tokenExpiry = a.token.expiry
                $0.autoSubscribe = a.autoSubscribe; $0.id = a.id; $0.resumeFailure = a.resumeFailure; $0.peer = a.peer
                $0.gatewayLife = a.gatewayLife
                $0.missed = a.missed.ranges.map { r in
                    .with { $0.serverID = r.server; $0.channelID = r.channel; $0.first = r.first; $0.last = r.last }
                }
            }
        case .opened(let o): opened = GHNodeOpenedSession(o)
        case .route(let body, let id, let key, let part):
            route = .with { $0.request = .with { $0.body = body }; $0.id = id; $0.key = key; $0.part = part }
        case .send(let r, let id, let key): send = GHNodeSend(r, id: id, key: key)
        case .check(let body, let gather, let key): check = GHNodeGathered(body, gather: gather, key: key)
        case .grant(let body, let gather, let key): grant = GHNodeGathered(body, gather: gather, key: key)
        case .tails(let channels, let user, let gather, let key):
            tails = .with { $0.channels = channels; $0.user = user; $0.gather = gather; $0.key = key }
        case .release(let user, let kind, let targets):
            release = .with {
                $0.user = user; $0.kind = Int32(kind)
                $0.targets = targets.map { t in .with { $0.serverID = t.server; $0.channelID = t.channel } }
            }
        case .acknowledged(let key, let ackedOrd, let packageAcked):
            acknowledged = .with { $0.key = key; $0.ackedOrd = ackedOrd; $0.packageAcked = packageAcked }
        case .ended(let key, let ackedOrd, let reconnecting): ended = .with { $0.key = key; $0.ackedOrd = ackedOrd; $0.reconnecting = reconnecting }
        case .received(let key, let seqs): received = .with { $0.key = key; $0.seqs = seqs }
        case .detached(let key, let since): detached = .with { $0.key = key; $0.since = since }
        case .resumed(let key): resumed = key
        case .behind(let key, let behind): self.behind = .with { $0.key = key; $0.behind = behind }
        case .replay(let channel, let after, let before): replay = .with { $0.channelID = channel; $0.after = after; $0.before = before }
        case .outbound(let queued, let applied): outbound = .with { $0.queued = Int64(queued); $0.applied = Int64(applied) }
        case .webhookPost(let d):
            webhookPost = .with {
                $0.channelID = d.channelID; $0.webhookID = d.webhookID; $0.secret = d.secret; $0.content = d.post.content; $0.token = d.token
                if let name = d.post.username { $0.username = name }
                if let avatar = d.post.avatar { $0.avatar = avatar }
            }
        }
    }

    func value() throws -> HomeCommand {
        switch command {
        case .admit(let a):
            let missed = MissedMessages(ranges: a.missed.map { .init(server: $0.serverID, channel: $0.channelID, first: $0.first, last: $0.last) })
            return .admit(Admission(key: a.key, token: AccessToken(user: a.user, device: a.device, expiry: a.tokenExpiry),
                                    autoSubscribe: a.autoSubscribe, id: a.id, resumeFailure: a.resumeFailure, missed: missed, peer: a.peer,
                                    gatewayLife: a.gatewayLife))
        case .opened(let o): return .opened(o.value)
        case .route(let r): return .route(try r.request.requiredBody(), id: r.id, key: r.key, part: r.part)
        case .send(let s): return .send(s.value, id: s.id, key: s.key)
        case .check(let g): return .check(try g.request.requiredBody(), gather: g.gather, key: g.key)
        case .grant(let g): return .grant(try g.request.requiredBody(), gather: g.gather, key: g.key)
        case .tails(let t): return .tails(t.channels, user: t.user, gather: t.gather, key: t.key)
        case .release(let r):
            return .release(r.user, kind: Int(r.kind), r.targets.map { SubscriptionTarget(server: $0.serverID, channel: $0.channelID) })
        case .acknowledged(let a): return .acknowledged(key: a.key, ackedOrd: a.ackedOrd, packageAcked: a.packageAcked)
        case .ended(let e): return .ended(e.key, ackedOrd: e.ackedOrd, reconnecting: e.reconnecting)
        case .received(let r): return .received(r.key, r.seqs)
        case .detached(let d): return .detached(d.key, since: d.since)
        case .resumed(let key): return .resumed(key)
        case .behind(let b): return .behind(b.key, b.behind)
        case .replay(let r): return .replay(r.channelID, after: r.after, before: r.before)
        case .outbound(let o): return .outbound(queued: Int(o.queued), applied: Int(o.applied))
        case .webhookPost(let w):
            let post = WebhookPost(content: w.content, username: w.hasUsername ? w.username : nil, avatar: w.hasAvatar ? w.avatar : nil)
            return .webhookPost(WebhookDelivery(channelID: w.channelID, webhookID: w.webhookID, secret: w.secret, post: post, token: w.token))
        case nil: throw NodeWireError("a home command holds nothing")
        }
    }
}

extension GHRequest {
    func requiredBody() throws -> GHRequest.OneOf_Body {
        guard let body else { throw NodeWireError("a forwarded request holds no body") }
        return body
    }
}

extension GHNodeOpenedSession {
    init(_ o: OpenedSession) {
        self.init()
        key = o.key
        user = o.user
        device = o.device
        sessionID = o.sessionID
        autoSubscribe = o.autoSubscribe
        gatewayLife = o.gatewayLife
    }

    var value: OpenedSession {
        OpenedSession(key: key, user: user, device: device, sessionID: sessionID, autoSubscribe: autoSubscribe, gatewayLife: gatewayLife)
    }
}

extension GHNodeGathered {
    init(_ body: GHRequest.OneOf_Body, gather: UInt64, key: UInt64) {
        self.init()
        request.body = body
        self.gather = gather
        self.key = key
    }
}

extension GHNodeSend {
    init(_ r: SendRequest, id: UInt64, key: UInt64) {
        self.init()
        channelID = r.channelID
        switch r.content {
        case .text(let t)?: text = t
        case .custom(let type, let data)?: custom = .with { $0.type = type; $0.data = Data(data) }
        case nil: break
        }
        mentions = r.mentions
        mentionAll = r.mentionAll
        needReceipt = r.needReceipt
        clientID = r.clientID
        replyTo = r.replyTo
        threadRoot = r.threadRoot
        if let refs = r.references {
            references = .with {
                if let q = refs.reply { $0.reply = .with { $0.messageUid = q.uid; $0.sender = q.sender; $0.excerpt = q.excerpt } }
                $0.threadRoot = refs.threadRoot
            }
        }
        uid = r.uid
        retried = r.retried
        attachments = r.attachmentIDs
        self.id = id
        self.key = key
    }

    var value: SendRequest {
        var r = SendRequest()
        r.channelID = channelID
        switch content {
        case .text(let t): r.content = .text(t)
        case .custom(let c): r.content = .custom(type: c.type, data: [UInt8](c.data))
        case nil: r.content = nil
        }
        r.mentions = mentions
        r.mentionAll = mentionAll
        r.needReceipt = needReceipt
        r.clientID = clientID
        r.replyTo = replyTo
        r.threadRoot = threadRoot
        if hasReferences {
            var refs = References()
            if references.hasReply {
                refs.reply = ReplyRef(uid: references.reply.messageUid, sender: references.reply.sender, excerpt: references.reply.excerpt)
            }
            refs.threadRoot = references.threadRoot
            r.references = refs
        }
        r.uid = uid
        r.retried = retried
        r.attachmentIDs = attachments
        return r
    }
}
