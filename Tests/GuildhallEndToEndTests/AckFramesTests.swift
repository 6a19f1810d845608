// The hand-written acknowledgement path against the generated protobuf code:
// the reader agrees with the generated decoder or steps aside, and the
// answer is the generated encoder's bytes. Over the wire, a plain
// acknowledgement (read by hand) and one with received marks (decoded) are
// answered alike, and one before login is refused as any request is. (That an
// acknowledgement read by hand moves offline sync on is SyncConformanceTests':
// its raw client's acknowledgements are plain.)

import Foundation
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct AckFramesTests {
    static func ackFrame(id: UInt64, seq: UInt64) -> GHFrame {
        var f = GHFrame()
        f.request.id = id
        f.request.ack.eventSeq = seq
        return f
    }

    @Test(arguments: [(0, 0), (1, 1), (127, 128), (UInt64.max, UInt64.max), (5, 0)] as [(UInt64, UInt64)])
    func theReaderReadsWhatTheGeneratedEncoderWrote(id: UInt64, seq: UInt64) throws {
        let read = try #require(MessageWire.readAck(FrameEncoding.payload(Self.ackFrame(id: id, seq: seq))))
        #expect(read.id == id && read.eventSeq == seq)
    }

    @Test(arguments: [0, 1, 300, UInt64.max] as [UInt64])
    func theAnswerIsTheGeneratedEncodersBytes(id: UInt64) throws {
        var frame = GHFrame()
        frame.response.id = id
        frame.response.result = .ok(GHOk())
        #expect(MessageWire.okAnswer(id: id) == FrameEncoding.payload(frame))
    }

    @Test func theReaderStepsAsideForAnythingElse() throws {
        var received = Self.ackFrame(id: 1, seq: 9)
        var upTo = GHReceivedUpTo()
        upTo.channelID = 3
        upTo.seq = 4
        received.request.ack.received = [upTo]
        var heartbeat = GHFrame()
        heartbeat.request.heartbeat.lastEventSeq = 9
        let good = FrameEncoding.payload(Self.ackFrame(id: 1, seq: 9))
        // An unknown field (31, varint 1) inside the ack; the event seq twice (the generated decoder keeps the last).
        var unknown = ProtoWriter()
        unknown.message(1) { $0.uint(1, 1); $0.embedded(13, [0x08, 0x09, 0xF8, 0x01, 0x01]) }
        var twice = ProtoWriter()
        twice.message(1) { $0.uint(1, 1); $0.embedded(13, [0x08, 0x09, 0x08, 0x0A]) }
        let cases: [[UInt8]] = [
            [],
            FrameEncoding.payload(received),
            FrameEncoding.payload(heartbeat),
            unknown.bytes,
            twice.bytes,
            good + good,
            Array(good.dropLast()),
        ]
        for bytes in cases { #expect(MessageWire.readAck(bytes) == nil, "\(bytes.prefix(16))") }
        #expect(try GHFrame(serializedBytes: twice.bytes).request.ack.eventSeq == 10)
    }

    /// The frame answers with `ok` (its accessor reads a default for any other answer).
    static func isOK(_ f: GHFrame) -> Bool { if case .ok? = f.response.result { true } else { false } }

    @Test func bothWaysOfReadingAnAcknowledgementAnswerItOverTheWire() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        try #require(raw.loginAndSync(server.token("ann")) != nil)
        let synced = raw.lastEventSeq
        #expect(synced > 0, "sync_completed carries an event seq")
        raw.ack(synced, id: 42)
        let plain = try #require(raw.nextFrame())
        #expect(plain.response.id == 42 && Self.isOK(plain), "\(plain)")
        var withMarks = GHRequest()
        withMarks.id = 43
        withMarks.ack.eventSeq = synced
        var upTo = GHReceivedUpTo()
        upTo.channelID = 1
        upTo.seq = 1
        withMarks.ack.received = [upTo]
        raw.send(withMarks)
        let decoded = try #require(raw.nextFrame())
        #expect(decoded.response.id == 43 && Self.isOK(decoded), "\(decoded)")

        let stranger = try RawConnection(port: server.port)
        stranger.ack(1, id: 7)
        let frames = stranger.framesUntilClosed()
        #expect(frames.errors.map(\.code) == [.unauthenticated])
        #expect(frames.closeReasons == [.authFailed])
    }

    /// An acknowledgement's answer waits for the session's next write (HeldAnswers.swift),
    /// yet keeps its place: a heartbeat sent behind it in the same write is answered after it,
    /// and an acknowledgement alone is answered though nothing else is written.
    @Test func anAcknowledgementsAnswerKeepsItsPlaceAndComesAlone() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let raw = try RawConnection(port: server.port)
        try #require(raw.loginAndSync(server.token("ann")) != nil)
        var ack = GHRequest()
        ack.id = 50
        ack.ack.eventSeq = raw.lastEventSeq
        var heartbeat = GHRequest()
        heartbeat.id = 51
        heartbeat.heartbeat = GHHeartbeat()
        raw.send(FrameEncoding.framed({ var f = GHFrame(); f.request = ack; return f }())
                 + FrameEncoding.framed({ var f = GHFrame(); f.request = heartbeat; return f }()))
        let first = try #require(raw.nextFrame()), second = try #require(raw.nextFrame())
        #expect(first.response.id == 50 && Self.isOK(first), "\(first)")
        #expect(second.response.id == 51, "\(second)")
        raw.ack(raw.lastEventSeq, id: 52)
        let alone = try #require(raw.nextFrame(timeout: 5))
        #expect(alone.response.id == 52 && Self.isOK(alone), "\(alone)")
    }

    /// Every prefix and single-byte change of a good frame: the reader never
    /// traps, and whatever it accepts the generated decoder reads the same way.
    @Test func theReaderNeverDisagreesWithTheGeneratedDecoder() throws {
        let good = FrameEncoding.payload(Self.ackFrame(id: 300, seq: 1 << 20))
        var accepted = 0
        for v in FrameVariants.of(good) {
            guard let read = MessageWire.readAck(v) else { continue }
            accepted += 1
            let frame = try GHFrame(serializedBytes: v)
            guard case .ack(let ack)? = frame.request.body else {
                Issue.record("read as an ack, decoded as \(String(describing: frame.request.body))")
                continue
            }
            #expect(frame.request.id == read.id && ack.eventSeq == read.eventSeq && ack.received.isEmpty)
        }
        #expect(accepted > good.count)
    }
}
