// What the end-to-end tests share: a real server on 127.0.0.1:0 with a
// temporary data folder, SDK clients logged in to it, a listener that
// records events, and waits with deadlines (never bare sleeps).

import Foundation
import GuildhallClient
@testable import GuildhallCore
@testable import GuildhallServer
import GuildhallWire
import Synchronization
import Testing

let testSecret = "e2e-secret"

/// The loops every test server runs with: `GUILDHALL_LOOPS` from the
/// environment (`make test` runs the suite with 1 and with 2), else 1.
let testLoops = ProcessInfo.processInfo.environment["GUILDHALL_LOOPS"].flatMap { Int($0) } ?? 1

struct WaitTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Polls `check` until it returns a value or `timeout` passes.
func waitFor<T>(_ what: String, timeout: Double = 10, _ check: () throws -> T?) async throws -> T {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if let value = try check() { return value }
        if Date() > deadline { throw WaitTimeout(what: what) }
        try await Task.sleep(nanoseconds: 5_000_000)
    }
}

/// Asks the server with `check` until it says yes or `timeout` passes.
func waitUntil(_ what: String, timeout: Double = 10, _ check: () async throws -> Bool) async throws {
    let deadline = Date().addingTimeInterval(timeout)
    while try await !check() {
        if Date() > deadline { throw WaitTimeout(what: what) }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
}

/// A wall clock a test can move forward.
final class TestClock: Sendable {
    let offset = Locked<UInt64>(0)
    func advance(ms: UInt64) { offset.withLock { $0 += ms } }
    var now: @Sendable () -> UInt64 { { [offset] in systemClock() + offset.withLock { $0 } } }
}

final class TestServer: Sendable {
    let folder: String
    let clock = TestClock()
    private let current: Locked<Settings>
    private let handle: Locked<ServiceHandle?>

    var settings: Settings { current.withLock { $0 } }

    /// Applies live settings, as SIGHUP does.
    func update(_ tweak: (inout Settings) throws -> Void) rethrows {
        var s = settings
        try tweak(&s)
        current.withLock { $0 = s }
        handle.withLock { $0?.update(s) }
    }

    init(_ tweak: (inout Settings) throws -> Void = { _ in }, folder: String? = nil) throws {
        self.folder = folder ?? NSTemporaryDirectory() + "guildhall-e2e-\(UUID().uuidString)"
        var s = Settings()
        s.listen = "127.0.0.1:0"
        s.data = self.folder
        s.secret = testSecret
        s.logLevel = "warn"
        s.loops = testLoops
        // Tests drive sessions far faster than a person: the abuse limits
        // are off unless a test sets them (RequestLimitsTests do).
        s.unlimited()
        // Many servers run at once: none takes the fixed admin port; tests that use it ask for a free one.
        s.adminListen = ""
        s.wsListen = ""
        try tweak(&s)
        current = Locked(s)
        handle = Locked(try ServiceHandle(settings: s, clock: clock.now))
    }

    var port: Int { handle.withLock { $0!.port } }
    var adminPort: Int { handle.withLock { $0!.adminPort } }
    var webSocketPort: Int { handle.withLock { $0!.webSocketPort } }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Stops gracefully; returns uv_loop_close's result (0: no leaked handle).
    @discardableResult
    func stop() -> Int32 {
        let h = handle.withLock { h in
            let old = h
            h = nil
            return old
        }
        return h?.stop() ?? 0
    }

    /// Stops, then starts again on the same data folder and the same port
    /// (with `tweak`'s changes, such as another number of loops).
    func restart(_ tweak: (inout Settings) -> Void = { _ in }) throws {
        let port = self.port
        stop()
        var s = settings
        tweak(&s)
        current.withLock { $0 = s }
        s.listen = "127.0.0.1:\(port)"
        let started = try ServiceHandle(settings: s, clock: clock.now)
        handle.withLock { $0 = started }
    }

    func token(_ user: String, device: String = "d1", ttl: Int64 = 3600) -> String {
        let expiry = UInt64(Int64(systemClock() / 1000) + ttl)
        return AccessToken(user: user, device: device, expiry: expiry).signed(with: Array(testSecret.utf8))
    }

    /// A logged-in client with a recorder attached.
    func client(_ user: String, device: String = "d1", auto: Bool = false,
                requestTimeoutMs: Int? = nil) async throws -> (GuildhallClient, Recorder) {
        var options = ClientOptions(token: token(user, device: device))
        options.autoSubscribe = auto
        if let requestTimeoutMs { options.requestTimeoutMs = requestTimeoutMs }
        let c = GuildhallClient(port: port, options: options)
        let r = Recorder()
        c.addListener(r)
        try await c.connect()
        return (c, r)
    }
}

/// Records every callback, in order.
final class Recorder: GuildhallListener {
    enum Event: Sendable {
        case message(GHChannelMessage)
        case notification(GHSystemNotification)
        case closed(GHCloseReason, String)
        case status(ConnectionStatus)
        case unread(GHUnreadInfo)
        case unreadStatus(GHUnreadStatus)
        case typing(GHTypingEvent)
        case syncCompleted
        case resumed(Int)
        case receivedStatus([GHReceivedStatus])
        case receivedRanges([GHReceivedRange])
        case receiptRequest(channel: UInt64, uid: UInt64)
        case receiptResponse(channel: UInt64, uid: UInt64, readers: [String: UInt64])
        case groupRead(GHReceiptResponse)
        case delivered([UInt64], conversation: UInt64, peer: String)
        case read([UInt64], conversation: UInt64, peer: String)
        case readReceipt(GHConversationType, target: String, reader: String, time: UInt64)
        case conversationRead(peer: String, conversation: UInt64)
        case update(GHMessageUpdate, unread: GHUnreadInfo?)
        case presence([GHPresence])
        case memberList(GHMemberListUpdate)
    }

    /// Each message's offline-sync shape: (uid, left, offline, hasPackage).
    struct ItemShape: Sendable, Equatable {
        let uid: UInt64
        let left: Int
        let offline: Bool
        let hasPackage: Bool
    }
    let shapes = Mutex<[ItemShape]>([])

    let events = Mutex<[Event]>([])
    /// The unread info that came with each message, by message UID.
    let messageUnread = Mutex<[UInt64: GHUnreadInfo]>([:])

    func onMessage(_ message: GHChannelMessage, unread: GHUnreadInfo?) {
        if let unread { messageUnread.withLock { $0[message.uid] = unread } }
        events.withLock { $0.append(.message(message)) }
    }
    func onMessage(_ message: GHChannelMessage, left: Int, offline: Bool, hasPackage: Bool) {
        shapes.withLock { $0.append(ItemShape(uid: message.uid, left: left, offline: offline, hasPackage: hasPackage)) }
    }
    func onOfflineMessageSyncCompleted() { events.withLock { $0.append(.syncCompleted) } }
    func onResumed(replayed: Int) { events.withLock { $0.append(.resumed(replayed)) } }
    func onReceivedStatusChanged(_ statuses: [GHReceivedStatus]) { events.withLock { $0.append(.receivedStatus(statuses)) } }
    func onReceivedRangesChanged(_ ranges: [GHReceivedRange]) { events.withLock { $0.append(.receivedRanges(ranges)) } }
    func onUnreadChanged(_ info: GHUnreadInfo) { events.withLock { $0.append(.unread(info)) } }
    func onMessageReceiptRequest(conversationType: GHConversationType, targetID: UInt64, messageUID: UInt64) {
        events.withLock { $0.append(.receiptRequest(channel: targetID, uid: messageUID)) }
    }
    func onMessageReceiptResponse(conversationType: GHConversationType, targetID: UInt64, messageUID: UInt64, readers: [String: UInt64]) {
        events.withLock { $0.append(.receiptResponse(channel: targetID, uid: messageUID, readers: readers)) }
    }
    func onGroupMessageRead(_ response: GHReceiptResponse) { events.withLock { $0.append(.groupRead(response)) } }
    func onMessagesDelivered(_ messageUIDs: [UInt64], conversationID: UInt64, by peer: String) {
        events.withLock { $0.append(.delivered(messageUIDs, conversation: conversationID, peer: peer)) }
    }
    func onMessagesRead(_ messageUIDs: [UInt64], conversationID: UInt64, by peer: String) {
        events.withLock { $0.append(.read(messageUIDs, conversation: conversationID, peer: peer)) }
    }
    func onReadReceiptReceived(conversationType: GHConversationType, targetID: String, readerID: String, readTime: UInt64) {
        events.withLock { $0.append(.readReceipt(conversationType, target: targetID, reader: readerID, time: readTime)) }
    }
    func onConversationRead(from peer: String, conversationID: UInt64) {
        events.withLock { $0.append(.conversationRead(peer: peer, conversation: conversationID)) }
    }
    func onUnreadStatus(_ status: GHUnreadStatus) { events.withLock { $0.append(.unreadStatus(status)) } }
    func onTyping(_ typing: GHTypingEvent) { events.withLock { $0.append(.typing(typing)) } }
    func onPresence(_ presences: [GHPresence]) { events.withLock { $0.append(.presence(presences)) } }
    func onMemberListUpdate(_ u: GHMemberListUpdate) { events.withLock { $0.append(.memberList(u)) } }

    var memberListUpdates: [GHMemberListUpdate] {
        events.withLock { $0.compactMap { if case .memberList(let u) = $0 { u } else { nil } } }
    }
    func onSystemNotification(_ n: GHSystemNotification) { events.withLock { $0.append(.notification(n)) } }
    func onMessageUpdated(_ u: GHMessageUpdate, unread: GHUnreadInfo?) { events.withLock { $0.append(.update(u, unread: unread)) } }

    /// Message updates heard, with the unread info each carried.
    var updates: [(update: GHMessageUpdate, unread: GHUnreadInfo?)] {
        events.withLock { $0.compactMap { if case .update(let u, let unread) = $0 { (u, unread) } else { nil } } }
    }

    func update(_ kind: GHMessageUpdateKind, of uid: UInt64, timeout: Double = 10) async throws -> (update: GHMessageUpdate, unread: GHUnreadInfo?) {
        try await waitFor("update \(kind) of \(uid)") { self.updates.first { $0.update.kind == kind && $0.update.message.uid == uid } }
    }
    func onSessionClosed(_ reason: GHCloseReason, message: String) { events.withLock { $0.append(.closed(reason, message)) } }
    func onConnectionStatus(_ status: ConnectionStatus) { events.withLock { $0.append(.status(status)) } }

    /// Each connection status and session close heard, in order, for a failure's message.
    var connectionStory: String {
        events.withLock { list in
            list.compactMap { e -> String? in
                switch e {
                case .status(.connected(let r)): "connected (\(r.resumed ? "resumed" : "logged in"))"
                case .status(let s): "\(s)"
                case .closed(let reason, let message): "closed \(reason): \(message)"
                case .syncCompleted: "synced"
                default: nil
                }
            }.joined(separator: " → ")
        }
    }

    var messages: [GHChannelMessage] {
        events.withLock { $0.compactMap { if case .message(let m) = $0 { m } else { nil } } }
    }

    var notifications: [GHSystemNotification] {
        events.withLock { $0.compactMap { if case .notification(let n) = $0 { n } else { nil } } }
    }

    var unreads: [GHUnreadInfo] {
        events.withLock { $0.compactMap { if case .unread(let u) = $0 { u } else { nil } } }
    }

    var statuses: [GHUnreadStatus] {
        events.withLock { $0.compactMap { if case .unreadStatus(let u) = $0 { u } else { nil } } }
    }

    var typings: [GHTypingEvent] {
        events.withLock { $0.compactMap { if case .typing(let t) = $0 { t } else { nil } } }
    }

    /// Presence frames heard, in order.
    var presenceFrames: [[GHPresence]] {
        events.withLock { $0.compactMap { if case .presence(let p) = $0 { p } else { nil } } }
    }

    /// The latest presence heard of `user`.
    func presence(of user: String) -> GHPresence? { presenceFrames.joined().last { $0.userID == user } }

    /// Waits until the latest presence heard of `user` matches.
    func presence(of user: String, timeout: Double = 10, where match: @escaping (GHPresence) -> Bool) async throws -> GHPresence {
        try await waitFor("presence of \(user)", timeout: timeout) { self.presence(of: user).flatMap { match($0) ? $0 : nil } }
    }

    var closes: [GHCloseReason] {
        events.withLock { $0.compactMap { if case .closed(let r, _) = $0 { r } else { nil } } }
    }

    var syncCompletions: Int {
        events.withLock { $0.filter { if case .syncCompleted = $0 { true } else { false } }.count }
    }

    var resumes: [Int] {
        events.withLock { $0.compactMap { if case .resumed(let n) = $0 { n } else { nil } } }
    }

    var receivedRanges: [GHReceivedRange] {
        events.withLock { $0.flatMap { e -> [GHReceivedRange] in if case .receivedRanges(let l) = e { l } else { [] } } }
    }

    var receivedStatuses: [GHReceivedStatus] {
        events.withLock { $0.flatMap { e -> [GHReceivedStatus] in if case .receivedStatus(let l) = e { l } else { [] } } }
    }

    /// Receipt requests heard: message UIDs, in order.
    var receiptRequests: [UInt64] {
        events.withLock { $0.compactMap { if case .receiptRequest(_, let uid) = $0 { uid } else { nil } } }
    }

    /// Receipt responses heard: (message UID, reader, read time), in order.
    var receiptResponses: [(uid: UInt64, reader: String, time: UInt64)] {
        events.withLock {
            $0.flatMap { e -> [(uid: UInt64, reader: String, time: UInt64)] in
                guard case .receiptResponse(_, let uid, let readers) = e else { return [] }
                return readers.sorted { $0.key < $1.key }.map { (uid, $0.key, $0.value) }
            }
        }
    }

    var connectedCount: Int {
        events.withLock { $0.filter { if case .status(.connected) = $0 { true } else { false } }.count }
    }

    func message(_ what: String = "a message", timeout: Double = 10, where match: @escaping (GHChannelMessage) -> Bool) async throws -> GHChannelMessage {
        try await waitFor(what, timeout: timeout) { self.messages.first(where: match) }
    }

    func notification(_ kind: GHNotificationKind, timeout: Double = 10) async throws -> GHSystemNotification {
        try await waitFor("notification \(kind)", timeout: timeout) { self.notifications.first { $0.kind == kind } }
    }

    func closed(timeout: Double = 10) async throws -> GHCloseReason {
        try await waitFor("a close event", timeout: timeout) { self.closes.first }
    }
}

/// Expects `body` to throw a wire error with `code`.
func expectError(_ code: GHErrorCode, _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) async {
    do {
        try await body()
        Issue.record("expected error \(code.rawValue), got success", sourceLocation: sourceLocation)
    } catch let e as GuildhallError {
        #expect(e.code == code, "\(e.message)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected error \(code.rawValue), got \(error)", sourceLocation: sourceLocation)
    }
}

/// A server with one channel that `owner` created and `members` joined.
func guild(_ server: TestServer, owner: GuildhallClient, members: [GuildhallClient]) async throws -> (GHServerInfo, GHChannelInfo) {
    let s = try await owner.servers.create(name: "Guild")
    for m in members { _ = try await m.servers.join(s.serverID) }
    let c = try await owner.channels.create(in: s.serverID, name: "general")
    return (s, c)
}

extension GuildhallClient {
    /// Subscribes channels of one server; returns the statuses in order.
    @discardableResult
    func sub(_ type: GHSubscriptionType, _ server: UInt64, _ channels: [UInt64], _ op: GHSubscribeOperation = .subscribe) async throws -> [GHTargetStatus] {
        try await subscriptions.subscribeChannel(SubscribeChannelParam(subscribeType: type, operationType: op,
                                                                       targets: channels.map { ChannelTarget(serverID: server, channelID: $0) })).map(\.status)
    }
}
