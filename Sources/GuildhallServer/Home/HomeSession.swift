// A logged-in session as its home sees it (docs/architecture.md): who it is, what it
// is interested in and owed (auto mode, guest entries, coalesced unread
// notices), how far its offline sync and its acknowledged inbox
// position have come, and the port to its gateway side, where its events
// are numbered and written. The home decides; the port carries out.
// Loop thread only (the home's loop).

import GuildhallCore
import GuildhallLoop
import GuildhallWire

final class HomeSession {
    // The fields every delivery touches come first (see `Session`).
    let key: UInt64
    /// The last fan-out that reached this session: one delivery per event without a set of keys.
    var deliveryMark: UInt64 = 0
    let port: any SessionPort
    /// Where its errors are counted.
    unowned let metrics: NodeMetrics
    let user: UserID
    let device: DeviceID
    let sessionID: String
    /// False once the session ended: callbacks that waited on the store check it.
    private(set) var isLoggedIn = true
    /// Since when (loop time) the session has had no connection, waiting for a resume.
    var detachedSince: UInt64?
    /// Its gateway reported it behind on its writes: owed unread notices wait.
    var isBehind = false
    /// Auto-subscribe mode (README "What clients receive").
    var autoSubscribe = false
    /// Its gateway's node's life (`ClusterView.life`; 0 unknown), for `Reception.followNodes`.
    var gatewayLife: UInt64 = 0
    /// Servers this session entered as a guest.
    var guestOf: Set<ServerID> = []
    /// Unread notices to send at the end of the turn, coalesced per channel.
    var pendingUnread: [ChannelID: UnreadNotice] = [:]
    /// Received-status ranges owed at the end of the turn (ReceivedRanges.swift).
    var pendingReceived: [ReceivedRangeKey: GHReceivedRange] = [:]
    /// The unread status last sent per channel, for edge-only status events.
    var sentUnreadStatus: [ChannelID: Bool] = [:]
    /// Offline sync's progress while it runs.
    var sync: OfflineSync?
    /// The highest inbox ord the client acknowledged (its gateway reports it), and the one written as the device's cursor.
    private(set) var ackedOrd: UInt64 = 0
    private var writtenOrd: UInt64 = 0
    /// Reasons the home asked the gateway not to read the session.
    private(set) var readPauses: ReadPauses = []
    /// On the home's list of sessions owed notices this turn.
    var isOwing = false
    /// Requests every home answers in part (their gateway merges the parts),
    /// by id: whether this home holds what the request names.
    var partAnswers: [UInt64: Bool] = [:]
    private unowned let owing: OwingList

    init(key: UInt64, port: any SessionPort, user: UserID, device: DeviceID, sessionID: String, owing: OwingList, metrics: NodeMetrics) {
        self.metrics = metrics
        self.key = key
        self.port = port
        self.user = user
        self.device = device
        self.sessionID = sessionID
        self.owing = owing
    }

    func respond(_ id: UInt64, _ result: GHResponse.OneOf_Result) {
        if !partAnswers.isEmpty, let fromHolder = partAnswers.removeValue(forKey: id) {
            port.answerPart(id, GatherPart(result: result, fromHolder: fromHolder))
            return
        }
        var frame = GHFrame()
        frame.response.id = id
        frame.response.result = result
        port.respond(encoded: FrameEncoding.payload(frame))
    }

    func respond(encoded payload: [UInt8]) { port.respond(encoded: payload) }

    func respond(answering id: UInt64, message: [UInt8]) { port.respond(answering: id, message: message) }

    func fail(_ id: UInt64, _ failure: Failure) {
        // A part of a gathered answer is counted once, as the merged answer, by the gateway that merges it.
        if partAnswers[id] == nil { metrics.answered(failure.code) }
        respond(id, .error(GHError(failure)))
    }

    @inline(__always)
    func push(event payload: SharedBytes, unread: FrameEncoding.RecipientUnread? = nil, cursor: UInt64 = 0) {
        port.push(event: payload, unread: unread, cursor: cursor)
    }

    func send(_ payload: SharedBytes, ord: UInt64 = 0) { port.send(payload, ord: ord) }

    func noteInboxItem(_ ord: UInt64) { port.noteInboxItem(ord) }

    /// The device's stored cursor: items up to it were synced before.
    func syncedFrom(_ cursor: UInt64) {
        if cursor > ackedOrd { ackedOrd = cursor; writtenOrd = cursor }
        port.syncedFrom(cursor)
    }

    /// The client acknowledged inbox items up to `ord`; returns whether the position moved.
    func acknowledged(upTo ord: UInt64) -> Bool {
        guard ord > ackedOrd else { return false }
        ackedOrd = ord
        return true
    }

    /// The acknowledged inbox position not yet written as the device's cursor, if any; marks it written.
    func unwrittenCursor() -> UInt64? {
        guard ackedOrd > writtenOrd else { return nil }
        writtenOrd = ackedOrd
        return ackedOrd
    }

    /// A cursor write of `ord` failed: unless a later one was written since, the cursor is owed again.
    func cursorNotWritten(_ ord: UInt64) {
        if writtenOrd == ord { writtenOrd = 0 }
    }

    func finishSync() {
        sync = nil
        port.finishSync()
    }

    func pauseReading(_ reason: ReadPauses) {
        guard !readPauses.contains(reason) else { return }
        readPauses.insert(reason)
        port.homePauses(reason)
    }

    /// `first` runs before the gateway reads the session again (the home's
    /// held sends go on: `Reception.releaseHeldSends`), and may pause it again.
    func resumeReading(_ reason: ReadPauses, first: () -> Void = {}) {
        guard readPauses.contains(reason) else { return }
        readPauses.remove(reason)
        first()
        if !readPauses.contains(reason) { port.homeResumes(reason) }
    }

    /// Queues an unread notice for the next flush (coalesced per channel).
    func owe(_ notice: UnreadNotice, _ channel: ChannelID) {
        if pendingUnread[channel] != .info { pendingUnread[channel] = notice }
        markOwing()
    }

    /// Puts the session on the list of those owed unread notices at the end of the turn.
    func markOwing() {
        if !isOwing {
            isOwing = true
            owing.sessions.append(self)
        }
    }

    /// The session ended; nothing more reaches it.
    func ended() { isLoggedIn = false }
}

/// Sessions owed coalesced notices this turn.
final class OwingList {
    var sessions: [HomeSession] = []
}
