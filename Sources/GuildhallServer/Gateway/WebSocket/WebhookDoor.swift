// Posts to incoming webhooks over the web listener's HTTP (docs/features.md
// "Webhooks"): `POST /webhooks/CHANNEL/WEBHOOK/SECRET` with a JSON body
// `{content, username?, avatar?}` of at most 64 KiB and a Content-Length.
// The door reads and checks the body (400, 405, 411, 413 and 415 name the
// problem before anything is sent), then hands the post to the channel's
// home (Webhooks.swift), wherever it is; that home's answer comes back
// here by its token and is the HTTP answer: 200 with the message's uid and
// seq, 404 for a webhook that is not there or a wrong secret (alike), 429
// past the webhook's rate, 503 while no node serves the channel. A post
// not answered within the handshake deadline is cut (408). Loop thread only.

import GuildhallCore
import GuildhallLoop

final class WebhookDoor {
    static let prefix = "/webhooks/"

    /// Hands a post to its channel's home; the status to answer at once when none takes it (nil: sent).
    private let deliver: (WebhookDelivery) -> Int?
    /// Writes a whole HTTP answer and closes the connection.
    private let answer: (TCPConnection, [UInt8]) -> Void
    private var reading: [UInt64: Reading] = [:]
    private var waiting: [UInt64: (connection: TCPConnection, since: UInt64)] = [:]
    private var nextKey: UInt64 = 0
    private let maxContentBytes: () -> Int

    private struct Reading {
        let connection: TCPConnection
        let channel: ChannelID
        let webhook: UInt64
        let secret: String
        var body: [UInt8] = []
    }

    init(maxContentBytes: @escaping () -> Int, deliver: @escaping (WebhookDelivery) -> Int?, answer: @escaping (TCPConnection, [UInt8]) -> Void) {
        self.maxContentBytes = maxContentBytes
        self.deliver = deliver
        self.answer = answer
    }

    static func isPost(_ head: HTTPRequest) -> Bool { head.path.hasPrefix(prefix) }

    /// A post's head: checked, then its body is read (the key), or it is answered now (nil).
    func begin(_ head: HTTPRequest, on c: TCPConnection) -> UInt64? {
        let parts = head.path.dropFirst(Self.prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, let channel = UInt64(parts[0]), let webhook = UInt64(parts[1]), !parts[2].isEmpty else {
            return refuse(c, 404, "no such webhook")
        }
        guard head.method == "POST" else { return refuse(c, 405, "post to a webhook with POST") }
        guard head.header("Transfer-Encoding") == nil, let length = head.header("Content-Length").flatMap(Int.init) else {
            return refuse(c, 411, "send the post with a Content-Length")
        }
        guard length <= WebhookPost.maxBodyBytes else { return refuse(c, 413, "a post is at most \(WebhookPost.maxBodyBytes) bytes, not \(length)") }
        let type = (head.header("Content-Type") ?? "").lowercased()
        guard type.hasPrefix("application/json") else { return refuse(c, 415, "send the post as Content-Type: application/json") }
        nextKey += 1
        reading[nextKey] = Reading(connection: c, channel: channel, webhook: webhook, secret: String(parts[2]))
        // A client that waits to be told to send its body (curl does, past 1 KiB) is told at once, as uploads are.
        if head.header("Expect")?.lowercased() == "100-continue" {
            c.enqueue(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
            c.flush()
        }
        return nextKey
    }

    func piece(_ key: UInt64, _ bytes: UnsafeRawBufferPointer) {
        guard reading[key] != nil, reading[key]!.body.count + bytes.count <= WebhookPost.maxBodyBytes else { return }
        reading[key]!.body.append(contentsOf: bytes)
    }

    /// The body is whole: read it, and hand the post to the channel's home.
    func bodyEnded(_ key: UInt64, now: UInt64) {
        guard let r = reading.removeValue(forKey: key) else { return }
        switch WebhookPost.read(r.body, maxContentBytes: maxContentBytes()) {
        case .failure(let problem):
            _ = refuse(r.connection, problem.status, problem.message)
        case .success(let post):
            // Waiting before it is handed on: a home on this loop may answer at once.
            waiting[key] = (r.connection, now)
            if let status = deliver(WebhookDelivery(channelID: r.channel, webhookID: r.webhook, secret: r.secret, post: post, token: key)) {
                waiting[key] = nil
                _ = refuse(r.connection, status, status == 404 ? "no such webhook" : "no node serves that channel now; retry")
            }
        }
    }

    /// The channel's home answered post `token`.
    func answered(token: UInt64, status: Int, body: String) {
        guard let w = waiting.removeValue(forKey: token), !w.connection.closed else { return }
        answer(w.connection, FileDoor.response(status, json: Array(body.utf8)))
    }

    /// The connection of a post ended (or was cut) before its answer.
    func abandoned(_ c: TCPConnection) {
        reading = reading.filter { $0.value.connection !== c }
        waiting = waiting.filter { $0.value.connection !== c }
    }

    func isPosting(_ c: TCPConnection) -> Bool { reading.values.contains { $0.connection === c } || waiting.values.contains { $0.connection === c } }

    private func refuse(_ c: TCPConnection, _ status: Int, _ message: String) -> UInt64? {
        answer(c, FileDoor.response(status, ["error": message]))
        return nil
    }
}
