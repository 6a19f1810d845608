// Incoming webhooks (docs/features.md "Webhooks"), at their channel's
// guild's home: made, listed and deleted by holders of MANAGE_WEBHOOKS
// (audited, in turn with the server's other changes), and posted to through
// the web listener (WebhookDoor.swift), whose door sends each post here.
// A post is a channel send like any other (SendRequest, the same checks of
// size, the same fan-out, durable before answered) whose sender is the
// webhook: it needs no member's permission, and each webhook has a
// message budget of its own at `rate-messages`, the rate of one session.
// A post to a webhook that is not there, or with the wrong secret, is
// answered 404 alike. Loop thread only.

import Foundation
import GuildhallCore
import GuildhallStore
import GuildhallLoop
import GuildhallWire

final class Webhooks: HomePart {
    unowned let services: HomeServices
    /// Making and deleting a webhook are changes to a server, queued with its other changes.
    private unowned let requests: DirectoryRequests
    /// The sessions that owe frames (a post's stand-in session joins them).
    private let owing: OwingList
    /// A post is sent as any message (Home.sendMessage).
    private let send: (SendRequest, UInt64, HomeSession) -> Void
    private(set) var book = WebhookBook()
    /// Each webhook's message budget.
    private var budgets: [UInt64: RequestBudget] = [:]

    /// The most webhooks one channel has.
    static let perChannel = 10

    init(services: HomeServices, requests: DirectoryRequests, owing: OwingList, send: @escaping (SendRequest, UInt64, HomeSession) -> Void) {
        self.services = services
        self.requests = requests
        self.owing = owing
        self.send = send
    }

    func load(_ list: [WebhookRecord]) { for w in list { book.save(w) } }

    func forget(where drop: (WebhookRecord) -> Bool) { book.forget(where: drop) }

    /// Directory changes committed: a deleted channel or server takes its webhooks with it (the store deleted their rows with it).
    /// A webhook made, once stored (`StateChange.webhookSaved`).
    func saved(_ w: WebhookRecord) { book.save(w) }

    /// A webhook deleted, once stored.
    func deleted(_ w: WebhookRecord) {
        book.remove(w.id)
        budgets[w.id] = nil
    }

    func applied(_ changes: [DirectoryChange]) {
        for change in changes {
            switch change {
            case .serverDeleted(let id): book.forget { $0.serverID == id }
            case .channelDeleted(let id): book.forget { $0.channelID == id }
            default: break
            }
        }
    }
}

// MARK: Requests (MANAGE_WEBHOOKS in the channel, checked by the request table)

extension Webhooks {
    func create(_ r: GHCreateWebhook, id: UInt64, from s: HomeSession) {
        requests.change(directory.serverID(ofChannel: r.channelID), id: id, from: s) { [self] () throws(Failure) -> Effects in
            let c = try directory.seen(by: s.user).channel(r.channelID)
            try Validation.plainName(r.name, field: "name")
            guard book.webhooks(in: c.id).count < Self.perChannel else {
                throw Failure(.limitReached, "a channel has at most \(Self.perChannel) webhooks; delete one first")
            }
            let secret = WebhookRecord.newSecret()
            let w = WebhookRecord(id: services.ids.next(nowMillis: now()), serverID: c.serverID, channelID: c.id, name: r.name,
                                  secretHash: WebhookRecord.hash(secret), createdBy: s.user, createdAt: now())
            let audit = try requests.audit(.webhookCreated, c.serverID, by: s, target: String(w.id), channel: c.id,
                                           changes: [AuditChange(key: "name", before: "", after: AuditDiff.json(w.name))], reason: r.reason)
            var shown = GHWebhook(w)
            shown.secret = secret
            shown.path = WebhookRecord.path(channel: c.id, webhook: w.id, secret: secret)
            var e = Effects(writes: [.webhookSaved(w)] + audit, reply: .result(.webhook(shown)))
            e.changes = [.webhookSaved(w)]
            return e
        }
    }

    func list(_ r: GHListWebhooks, id: UInt64, from s: HomeSession) {
        attempt(id, s) { () throws(Failure) in
            let c = try directory.seen(by: s.user).channel(r.channelID)
            var list = GHWebhookList()
            list.webhooks = book.webhooks(in: c.id).map(GHWebhook.init)
            s.respond(id, .webhooks(list))
        }
    }

    func delete(_ r: GHDeleteWebhook, id: UInt64, from s: HomeSession) {
        requests.change(directory.serverID(ofChannel: r.channelID), id: id, from: s) { [self] () throws(Failure) -> Effects in
            let c = try directory.seen(by: s.user).channel(r.channelID)
            guard let w = book.byID[r.webhookID], w.channelID == c.id else { throw Failure.notFound("webhook \(r.webhookID) not found") }
            let audit = try requests.audit(.webhookDeleted, c.serverID, by: s, target: String(w.id), channel: c.id,
                                           changes: [AuditChange(key: "name", before: AuditDiff.json(w.name), after: "")], reason: r.reason)
            var e = Effects(writes: [.webhookDeleted(id: w.id, serverID: w.serverID)] + audit, reply: .ok)
            e.changes = [.webhookDeleted(w)]
            return e
        }
    }
}

// MARK: Posts

extension Webhooks {
    /// A post from the door at `door`: sent as the webhook's message, answered there.
    func post(_ d: WebhookDelivery, door: Int) {
        let answer = { [services] (status: Int, fields: [String: Any]) in
            let body = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            services.links.webhookAnswered(token: d.token, status: status, body: body, to: door, local: services.gateway)
        }
        guard let w = book.byID[d.webhookID], w.channelID == d.channelID, w.opens(with: d.secret), directory.channel(w.channelID) != nil else {
            return answer(404, ["error": "no such webhook"])
        }
        let now = now()
        var budget = budgets[w.id] ?? RequestBudget(classes: 1, now: now)
        let verdict = budget.take(0, rates: RequestBudget.Rates([settings.rateMessages]), maxStrikes: .max, now: now)
        budgets[w.id] = budget
        if case .refused(let ms) = verdict {
            return answer(429, ["error": "this webhook posts at most \(settings.rateMessages) messages a second", "retry_after_ms": Int(ms)])
        }
        var r = SendRequest()
        r.channelID = w.channelID
        r.content = .text(d.post.content)
        let author = WebhookAuthor(webhookID: w.id, name: d.post.username ?? w.name, avatar: d.post.avatar ?? "")
        r.webhook = author
        let port = WebhookReplyPort { payload in
            guard let frame = try? GHFrame(serializedBytes: payload), case .response(let response)? = frame.kind else {
                return answer(500, ["error": "the answer could not be read"])
            }
            switch response.result {
            case .message(let m)?: answer(200, ["uid": String(m.uid), "seq": Int(m.seq), "channel_id": String(m.channelID)])
            case .error(let e)?: answer(Self.status(of: e.code), ["error": e.message])
            default: answer(500, ["error": "unexpected answer"])
            }
        }
        // Key 0 is no session's: the message's fan-out leaves nobody out for it.
        let s = HomeSession(key: 0, port: port, user: author.senderID, device: "webhook", sessionID: "", owing: owing, metrics: services.metrics)
        send(r, 1, s)
    }

    /// The HTTP status for an error code (they are HTTP's numbers).
    private static func status(of code: GHErrorCode) -> Int { (100...599).contains(code.rawValue) ? code.rawValue : 500 }
}

/// The port of a webhook post's send: its one answer goes back to the door.
private final class WebhookReplyPort: SessionPort {
    private let answered: ([UInt8]) -> Void
    init(_ answered: @escaping ([UInt8]) -> Void) { self.answered = answered }
    func respond(encoded payload: [UInt8]) { answered(payload) }
    func push(event payload: SharedBytes, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {}
    func send(_ payload: SharedBytes, ord: UInt64) {}
    func answerPart(_ id: UInt64, _ part: GatherPart) {}
    func admitted(user: UserID, device: DeviceID, sessionID: String) {}
    func syncedFrom(_ cursor: UInt64) {}
    func noteInboxItem(_ ord: UInt64) {}
    func packageSent() {}
    func finishSync() {}
    func homePauses(_ reason: ReadPauses) {}
    func homeResumes(_ reason: ReadPauses) {}
    func typing(_ entry: GHChannelTypers) {}
    func presence(_ list: [GHPresence]) {}
    func end(_ reason: GHCloseReason?, _ message: String) {}
}

extension GHWebhook {
    /// As listed: no secret, no path.
    init(_ w: WebhookRecord) {
        self.init()
        webhookID = w.id
        serverID = w.serverID
        channelID = w.channelID
        name = w.name
        createdBy = w.createdBy
        createdAt = w.createdAt
    }
}
