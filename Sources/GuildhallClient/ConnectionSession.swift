// One connection of the SDK, on the connection thread: log in (or resume
// the dropped session), then read frames until the connection ends, sending
// heartbeats and acknowledgements and failing requests whose deadline
// passed. Returns why it ended.

import GuildhallWire
import SwiftProtobuf

final class ConnectionSession {
    private let client: GuildhallClient
    private let socket: ClientSocket
    private var decoder = FrameDecoder(maxFrameBytes: 16 << 20)
    private(set) var loggedIn = false
    private var heartbeatMs: UInt64 = 30_000
    private var lastSent = GuildhallClient.nowMillis()
    private var closedBy: (GHCloseReason, String)?
    private let loginID: UInt64 = 0
    private var lastAck = GuildhallClient.nowMillis()
    private let started = GuildhallClient.nowMillis()

    init(client: GuildhallClient, socket: ClientSocket) {
        self.client = client
        self.socket = socket
    }

    func run() -> ClientError {
        let (auto, sessionID, lastSeq, seen) = client.state.withLock { ($0.autoSubscribe, $0.sessionID, $0.lastEventSeq, $0.lastSeen) }
        var frame = GHFrame()
        frame.request.id = loginID
        if client.options.resume && !sessionID.isEmpty {
            var resume = GHResume()
            resume.token = client.options.token()
            resume.sessionID = sessionID
            resume.lastEventSeq = lastSeq
            resume.autoSubscribe = auto
            resume.clientVersion = client.options.clientVersion
            // Up to where each channel was got: a fallback login names what is newer, even after a restart.
            resume.channels = seen.sorted { $0.key < $1.key }.prefix(1000).map { channel, seq in
                var r = GHReceivedUpTo()
                r.channelID = channel
                r.seq = seq
                return r
            }
            frame.request.resume = resume
        } else {
            var login = GHLogin()
            login.token = client.options.token()
            login.autoSubscribe = auto
            login.clientVersion = client.options.clientVersion
            frame.request.login = login
        }
        guard client.write(FrameEncoding.framed(frame), on: socket) else { return .disconnected("cannot send login") }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            guard let n = socket.receive(timeoutMs: 100, into: &buffer) else {
                if let (reason, message) = closedBy { return .sessionClosed(reason, message) }
                return .disconnected("connection closed by the server")
            }
            if n > 0 {
                decoder.feed(Array(buffer[0..<n]))
                do {
                    var frames: [GHFrame] = []
                    while let payload = try decoder.next() {
                        if let frame = try? GHFrame(serializedBytes: payload) { frames.append(frame) }
                    }
                    // Direct messages are reported delivered before the application hears of them.
                    reportDeliveries(in: frames)
                    for frame in frames { handle(frame) }
                } catch {
                    return .disconnected("unreadable stream from the server")
                }
            }
            tick()
            // A login nobody answers (a node that hangs, a balancer holding a dead
            // backend's connection) is given up like a request, and tried again.
            if !loggedIn, GuildhallClient.nowMillis() - started >= UInt64(client.options.loginTimeoutMs) {
                return .disconnected("the login was not answered within \(client.options.loginTimeoutMs) ms")
            }
        }
    }

    private func handle(_ frame: GHFrame) {
        switch frame.kind {
        case .response(let r)?:
            if r.id == loginID && !loggedIn { loginAnswered(r); return }
            let p = client.state.withLock { $0.pending.removeValue(forKey: r.id) }
            guard let p else { return }
            if case .error(let e)? = r.result {
                p.continuation.resume(throwing: GuildhallError(e))
            } else if let result = r.result {
                p.continuation.resume(returning: result)
            } else {
                p.continuation.resume(throwing: GuildhallError(code: .internal, message: "empty response"))
            }
        case .event(let e)?:
            let (fresh, ackNow) = client.state.withLock { s -> (Bool, Bool) in
                if e.seq != 0 { s.lastEventSeq = e.seq }
                if case .message(let m)? = e.body, m.serverID != 0, m.seq > s.receivedUpTo[m.channelID] ?? 0 { s.receivedUpTo[m.channelID] = m.seq }
                if e.cursor != 0 {
                    if e.cursor <= s.cursorSeen { return (false, e.offline && e.left == 0) }
                    s.cursorSeen = e.cursor
                }
                return (true, (e.offline && e.left == 0) || s.lastEventSeq >= s.ackedSeq + UInt64(client.options.ackEvery))
            }
            if fresh { dispatch(e) }
            if ackNow { acknowledge() }
        default:
            break
        }
    }

    private func loginAnswered(_ r: GHResponse) {
        let waiters: [CheckedContinuation<GHLoginResult, any Error>]
        switch r.result {
        case .login(let result)?:
            loggedIn = true
            heartbeatMs = UInt64(max(100, result.heartbeatIntervalMs))
            let (w, reconnected) = client.state.withLock { s in
                s.loggedIn = true
                s.login = result
                s.logins += 1
                if !result.resumed {
                    // A new session: its events count from 1 again.
                    s.lastEventSeq = 0
                    s.ackedSeq = 0
                }
                s.sessionID = result.sessionID
                let w = s.connectWaiters
                s.connectWaiters = []
                return (w, s.logins > 1 && !result.resumed)
            }
            waiters = w
            for w in waiters { w.resume(returning: result) }
            // A resume that could not replay: what the old session was sent comes from history,
            // before the live messages that follow this answer (they wait meanwhile).
            if !result.resumed { client.beginFilling(result.missed) }
            if reconnected {
                let client = self.client
                Task {
                    await client.replayLedger()
                    client.notify { $0.onConnectionStatus(.connected(result)) }
                }
            } else {
                client.notify { $0.onConnectionStatus(.connected(result)) }
            }
        case .error(let e)?:
            let error = GuildhallError(e)
            // A node that cannot serve the user now (the user's home is moving
            // between nodes) is a reason to try again, not to give up: the close
            // that follows sends the client to the next node, or back to the
            // same address (a cluster behind one balancer) after the backoff. Only
            // a first login with nowhere else to go fails `connect()`, whose caller decides.
            if error.code == .unavailable && (client.addresses.count > 1 || client.state.withLock { $0.logins > 0 }) { return }
            waiters = client.state.withLock { s in
                s.fatal = error
                let w = s.connectWaiters
                s.connectWaiters = []
                return w
            }
            for w in waiters { w.resume(throwing: error) }
        default:
            break
        }
    }

    private func dispatch(_ e: GHEvent) {
        switch e.body {
        case .message(let m)?:
            if m.serverID != 0 {
                if client.holdsForFill(m, e) { return }
                guard client.noteDelivered(m) else { return }
            }
            let unread = e.messageUnread
            client.notify {
                $0.onMessage(m, unread: unread)
                $0.onMessage(m, left: Int(e.left), offline: e.offline, hasPackage: e.morePackages)
            }
        case .unreadChanged(let u)?: client.notify { $0.onUnreadChanged(u) }
        case .unreadStatus(let u)?: client.notify { $0.onUnreadStatus(u) }
        case .typing(let t)?:
            // One call per channel the frame carries (a server before `channels` sent one).
            for one in t.channels.isEmpty ? [t] : t.channels.map(GHTypingEvent.init(one:)) { client.notify { $0.onTyping(one) } }
        case .notification(let n)?: client.notify { $0.onSystemNotification(n) }
        case .receivedStatus(let list)?:
            if !list.statuses.isEmpty { client.notify { $0.onReceivedStatusChanged(list.statuses) } }
            if !list.ranges.isEmpty { client.notify { $0.onReceivedRangesChanged(list.ranges) } }
        case .receiptRequest(let r)?:
            client.notify { $0.onMessageReceiptRequest(conversationType: r.conversationType, targetID: r.channelID, messageUID: r.messageUid) }
        case .receiptResponse(let list)?:
            for r in list.responses {
                client.notify {
                    $0.onMessageReceiptResponse(conversationType: r.conversationType, targetID: r.channelID, messageUID: r.messageUid, readers: r.readers)
                    $0.onGroupMessageRead(r)
                }
            }
        case .directReceipt(let d)?: dispatchDirectReceipt(d)
        case .messageUpdate(let u)?:
            let unread = e.messageUnread
            client.notify { $0.onMessageUpdated(u, unread: unread) }
        case .presence(let p)?: client.notify { $0.onPresence(p.presences) }
        case .memberList(let u)?: client.notify { $0.onMemberListUpdate(u) }
        case .syncCompleted?: client.notify { $0.onOfflineMessageSyncCompleted() }
        case .resumed(let r)?: client.notify { $0.onResumed(replayed: Int(r.replayed)) }
        case .closed(let c)?:
            closedBy = (c.reason, c.message)
            client.notify { $0.onSessionClosed(c.reason, message: c.message) }
        case nil: break
        }
    }

    private func dispatchDirectReceipt(_ d: GHDirectReceipt) {
        switch d.status {
        case .delivered:
            client.notify { $0.onMessagesDelivered(d.messageUids, conversationID: d.conversationID, by: d.readerID) }
        case .read where !d.messageUids.isEmpty:
            client.notify { $0.onMessagesRead(d.messageUids, conversationID: d.conversationID, by: d.readerID) }
        case .read:
            client.notify {
                $0.onReadReceiptReceived(conversationType: d.conversationType, targetID: d.readerID, readerID: d.readerID, readTime: d.readTime)
                if d.conversationRead { $0.onConversationRead(from: d.readerID, conversationID: d.conversationID) }
            }
        default:
            break
        }
    }

    /// Tells the server direct messages reached this device (their senders get "delivered").
    /// One request per 100 received, per read from the socket.
    private func reportDeliveries(in frames: [GHFrame]) {
        // The login answer may come in the same read as the first offline items.
        let answered = frames.lazy.compactMap { f -> String? in
            if case .response(let r)? = f.kind, case .login(let l)? = r.result { l.userID } else { nil }
        }.first
        guard client.options.deliveryReceipts, let me = answered ?? client.state.withLock({ $0.login?.userID }) else { return }
        let received = frames.compactMap { f -> UInt64? in
            // A direct message to me: mine in a pair, or another member's in a group (no recipient named).
            guard case .event(let e)? = f.kind, case .message(let m)? = e.body, m.serverID == 0, m.sentStatus == .unspecified,
                  m.recipientID == me || (m.recipientID.isEmpty && m.senderID != me) else { return nil }
            return m.uid
        }
        guard !received.isEmpty else { return }
        var bytes: [UInt8] = []
        for start in stride(from: 0, to: received.count, by: 100) {
            var frame = GHFrame()
            frame.request.id = UInt64.max - 3
            frame.request.markDelivered.messageUids = Array(received[start..<min(start + 100, received.count)])
            bytes += FrameEncoding.framed(frame)
        }
        _ = client.write(bytes, on: socket)
    }

    /// Acknowledges every event received so far.
    private func acknowledge() {
        let taken = client.state.withLock { s -> (UInt64, [UInt64: UInt64])? in
            guard s.lastEventSeq > s.ackedSeq else { return nil }
            s.ackedSeq = s.lastEventSeq
            defer { s.receivedUpTo.removeAll() }
            return (s.lastEventSeq, s.receivedUpTo)
        }
        guard let (seq, received) = taken else { return }
        lastAck = GuildhallClient.nowMillis()
        var frame = GHFrame()
        frame.request.id = UInt64.max - 1
        frame.request.ack.eventSeq = seq
        // The server counts these messages as retrieved by the user's devices (received status).
        frame.request.ack.received = received.sorted { $0.key < $1.key }.map { channel, upTo in
            var r = GHReceivedUpTo()
            r.channelID = channel
            r.seq = upTo
            return r
        }
        _ = client.write(FrameEncoding.framed(frame), on: socket)
    }

    /// Heartbeats and request deadlines, about every 100 ms.
    private func tick() {
        let now = GuildhallClient.nowMillis()
        if loggedIn && now - lastAck >= 1000 { acknowledge() }
        if loggedIn && now - lastSent >= heartbeatMs / 2 {
            lastSent = now
            var frame = GHFrame()
            frame.request.id = UInt64.max
            frame.request.heartbeat = GHHeartbeat()
            _ = client.write(FrameEncoding.framed(frame), on: socket)
        }
        let expired = client.state.withLock { s -> [GuildhallClient.Pending] in
            let ids = s.pending.filter { $0.value.deadline <= now }.map(\.key)
            return ids.compactMap { s.pending.removeValue(forKey: $0) }
        }
        for p in expired { p.continuation.resume(throwing: ClientError.timeout) }
    }
}

extension GHTypingEvent {
    /// A single-channel event for one entry of a typing frame.
    init(one entry: GHChannelTypers) {
        self.init()
        serverID = entry.serverID
        channelID = entry.channelID
        typers = entry.typers
        channels = [entry]
    }
}
