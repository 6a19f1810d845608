// A session's behaviour through a sink that records (FrameSink.swift), with
// no socket: answers, events held during offline sync and let out in order,
// the replay of what a detached session missed onto its next connection,
// the outbound cap, reading paused and resumed, and why it ended. What the
// sink records is decoded as a client would: a shared event payload and the
// recipient's trailer merge into one Frame.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallWire
import Testing
@testable import GuildhallServer

/// A sink with no socket: each frame as the peer would decode it.
final class RecordingFrameSink: FrameSink {
    private(set) var frames: [GHFrame] = []
    /// Bytes "queued": everything recorded, until `taken` says the peer read it.
    private(set) var recordedBytes = 0
    var taken = 0
    private(set) var reading = true
    private(set) var closed: (GHCloseReason, String)?

    var connection: TCPConnection? { nil }
    var queuedBytes: Int { recordedBytes - taken }

    private func record(_ bytes: [UInt8]) {
        recordedBytes += bytes.count
        if let f = try? GHFrame(serializedBytes: bytes) { frames.append(f) }
    }

    func send(_ frame: GHFrame) { record(FrameEncoding.payload(frame)) }
    func send(payload: [UInt8]) { record(payload) }
    func send(framed bytes: [UInt8]) { recordedBytes += bytes.count }

    func sendEvent(_ payload: SharedBytes, seq: UInt64, unread: FrameEncoding.RecipientUnread?, cursor: UInt64) {
        var bytes = [UInt8](UnsafeRawBufferPointer(start: payload.base, count: payload.count))
        var trailer = [UInt8](repeating: 0, count: FrameEncoding.maxTrailerBytes)
        let n = trailer.withUnsafeMutableBytes { FrameEncoding.eventTrailer(seq: seq, unread: unread, cursor: cursor, into: $0.baseAddress!) }
        bytes += trailer[0..<n]
        record(bytes)
    }

    func sendClosed(_ reason: GHCloseReason, _ message: String) {
        closed = (reason, message)
        send(Self.closedFrame(reason, message))
    }

    func stopReading() { reading = false }
    func startReading() { reading = true }

    /// The seqs of the events recorded, in order.
    var eventSeqs: [UInt64] { frames.compactMap { if case .event(let e)? = $0.kind { e.seq } else { nil } } }
    /// The texts of the channel messages recorded, in order.
    var texts: [String] { frames.compactMap { if case .event(let e)? = $0.kind, case .message(let m)? = e.body { m.body.text } else { nil } } }
}

@Suite struct SessionTests {
    /// A gateway on a loop that never runs: no listener, no socket.
    final class Bench {
        let loop = EventLoop()
        let gateway: Gateway

        init() {
            var settings = Settings()
            settings.loops = 1
            let served = ServedShards(settings: settings), cluster = ClusterView(settings: settings)
            let routes = HomeRoutes(map: HomeMap(settings), index: 0, channels: [:], served: served, cluster: cluster, bus: nil)
            gateway = Gateway(index: 0, loop: loop, settings: settings, log: ServerLog(level: "error", format: settings.logFormat), secret: [],
                              clock: { 0 }, routes: routes, limits: GatewayLimits(settings, node: NodeGuard(loops: 1, metrics: NodeMetrics(loops: 1), served: served, cluster: cluster)))
        }

        func session(_ sink: RecordingFrameSink, outboundCap: Int = 1 << 20) -> Session {
            Session(key: 1, sink: sink, peer: "test", liveness: SessionLiveness(now: 0, loginDeadlineMs: 1000, idleTimeoutMs: 1000, frameDeadlineMs: 1000),
                    maxFrameBytes: 1 << 20, outboundCap: outboundCap, replayCapacity: 100, gateway: gateway)
        }
    }

    static func message(_ text: String) -> SharedBytes {
        var body = GHEvent.OneOf_Body.message(GHChannelMessage())
        if case .message(var m) = body {
            m.channelID = 7
            m.body.text = text
            body = .message(m)
        }
        return body.sharedPayload
    }

    @Test func answersGoToTheSinkAsFrames() {
        let bench = Bench(), sink = RecordingFrameSink()
        let s = bench.session(sink)
        s.queueAnswer(5, .ok(GHOk()))
        s.queueAnswer(encoded: FrameEncoding.payload(GHFrame.with { $0.response.id = 6; $0.response.ok = GHOk() }))
        #expect(sink.frames.map(\.response.id) == [5, 6])
        #expect(s.isDirty, "on the flush list")
    }

    @Test func liveEventsWaitForOfflineSyncAndThenComeInOrder() {
        let bench = Bench(), sink = RecordingFrameSink()
        let s = bench.session(sink)
        s.loggedIn("alice", device: "phone", sessionID: "s")
        #expect(s.isSyncing)
        s.push(event: Self.message("live 1"), unread: .init(unreadCount: 1, mentionedCount: 0, ackTimestamp: 0, readSeq: 0))
        s.send(Self.message("offline item"), ord: 3)
        s.push(event: Self.message("live 2"))
        #expect(sink.texts == ["offline item"], "live events wait for sync")
        s.finishSync()
        #expect(sink.texts == ["offline item", "live 1", "live 2"])
        #expect(sink.eventSeqs == [1, 2, 3], "numbered as they go out")
        #expect(sink.frames[1].event.unread.unreadCount == 1, "the recipient's trailer merges into the shared payload")
    }

    @Test func aDetachedSessionReplaysWhatItMissedOntoItsNextSink() {
        let bench = Bench(), first = RecordingFrameSink()
        let s = bench.session(first)
        s.loggedIn("alice", device: "phone", sessionID: "s")
        s.finishSync()
        for i in 1...4 { s.push(event: Self.message("m\(i)")) }
        s.acknowledge(upTo: 2)
        #expect(s.detach(at: 10, why: .slowConsumer) === first)
        s.push(event: Self.message("while away"))
        let second = RecordingFrameSink()
        #expect(s.canResume(after: 2))
        var why: GHCloseReason?
        let replayed = s.attach(second, peer: "again", replayingAfter: 2) { reason in
            why = reason
            s.queueAnswer(9, .ok(GHOk()))
        }
        #expect(replayed == 3)
        #expect(why == .slowConsumer, "the reason the old connection could not carry")
        #expect(second.frames.first?.response.id == 9, "the answer first")
        #expect(second.texts == ["m3", "m4", "while away"])
        #expect(second.eventSeqs == [3, 4, 5])
        #expect(s.peer == "again")
    }

    @Test func aSessionPastItsOutboundCapIsMarkedToClose() {
        let bench = Bench(), sink = RecordingFrameSink()
        let s = bench.session(sink, outboundCap: 4096)
        s.loggedIn("alice", device: "phone", sessionID: "s")
        s.finishSync()
        for i in 0..<20 { s.push(event: Self.message(String(repeating: "x", count: 100) + "\(i)")) }
        #expect(!s.overflowed, "2 KiB queued")
        sink.taken = sink.recordedBytes
        for i in 0..<60 { s.push(event: Self.message(String(repeating: "y", count: 100) + "\(i)")) }
        #expect(s.overflowed, "\(sink.queuedBytes) bytes queued")
    }

    @Test func readingPausesUntilNoReasonIsLeftAndTheEndIsSaid() {
        let bench = Bench(), sink = RecordingFrameSink()
        let s = bench.session(sink)
        s.pauseReading(.storage)
        s.pauseReading(.outbound)
        #expect(!sink.reading)
        s.unpause(.storage)
        #expect(!sink.reading, "one reason is left")
        s.unpause(.outbound)
        #expect(sink.reading)
        s.sendClosed(.replaced, "logged in elsewhere")
        #expect(sink.closed?.0 == .replaced)
        #expect(sink.frames.last?.event.closed.reason == .replaced)
        #expect(sink.frames.last?.event.seq == 0, "outside the event sequence")
        #expect(s.close(.replaced) === sink)
        #expect(!s.isOpen)
    }
}
