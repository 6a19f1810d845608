// How the load generator speaks to each server under test: what a
// subscriber and a publisher send first, how a publish is encoded, and how
// acknowledgements are counted. Guildhall speaks Proto/ frames; Redis RESP
// (SUBSCRIBE/PUBLISH); NATS its text protocol (SUB/PUB, PING/PONG as acks);
// the sink a one-line request for a stream of records.

import Foundation
import GuildhallCore
import GuildhallWire

protocol BenchWire {
    /// Bytes subscriber `index` sends once connected.
    func subscriberHello(_ index: Int) -> [UInt8]
    /// Bytes publisher `index` sends once connected.
    func publisherHello(_ index: Int) -> [UInt8]
    /// Acknowledgements a subscriber must see before it is ready.
    var subscriberReadyAcks: Int { get }
    /// Acknowledgements a publisher must see before it is ready.
    var publisherReadyAcks: Int { get }
    /// Appends one publish of `payload`.
    func appendPublish(_ payload: [UInt8], to out: inout [UInt8])
    /// Appends one publish of `payload` by publisher `publisher` (to its channel, where there are several).
    func appendPublish(_ payload: [UInt8], publisher: Int, to out: inout [UInt8])
    /// Publishes per acknowledgement (NATS acks a batch with one PONG).
    var publishesPerAck: Int { get }
    /// Appends what closes a batch of `publishesPerAck` publishes (NATS: PING).
    func appendBatchEnd(to out: inout [UInt8])
    func makeAckCounter() -> AckCounter
    /// Appends what a subscriber sends after receiving `received` records
    /// (Guildhall: an acknowledgement, so the server's replay buffer stays small).
    func appendSubscriberAck(received: UInt64, to out: inout [UInt8])
}

extension BenchWire {
    func appendPublish(_ payload: [UInt8], publisher: Int, to out: inout [UInt8]) { appendPublish(payload, to: &out) }
    var publishesPerAck: Int { 1 }
    func appendBatchEnd(to out: inout [UInt8]) {}
    func appendSubscriberAck(received: UInt64, to out: inout [UInt8]) {}
}

/// Counts acknowledgements in a connection's byte stream.
protocol AckCounter {
    mutating func count(_ bytes: UnsafeRawBufferPointer) -> Int
}

// MARK: Guildhall

struct GuildhallWire: BenchWire {
    let secret: [UInt8]
    let server: UInt64
    let channel: UInt64
    /// With several channels (`BenchTargets.channelIDs`): subscriber and publisher i use channel i % count.
    var channels: [UInt64] = []
    /// Publishes are text (BenchText, seeded by the record's publisher and seq), which the
    /// server indexes for search, instead of the record as custom content. Nothing
    /// reads records back then: for benchmarks without subscribers.
    var textBodies = false

    private func channel(of index: Int) -> UInt64 { channels.isEmpty ? channel : channels[index % channels.count] }

    func token(_ user: String) -> String {
        AccessToken(user: user, device: "bench", expiry: UInt64(Date().timeIntervalSince1970) + 3600).signed(with: secret)
    }

    func subscriberHello(_ index: Int) -> [UInt8] {
        var login = GHRequest()
        login.id = 1
        login.login.token = token("m\(index)")
        var sub = GHRequest()
        sub.id = 2
        sub.subscribe.type = .channelMsg
        var t = GHSubscriptionTarget()
        t.serverID = server
        t.channelID = channel(of: index)
        sub.subscribe.targets = [t]
        return framed(login) + framed(sub)
    }

    func publisherHello(_ index: Int) -> [UInt8] {
        var login = GHRequest()
        login.id = 1
        login.login.token = token("p\(index)")
        return framed(login)
    }

    var subscriberReadyAcks: Int { 2 }
    var publisherReadyAcks: Int { 1 }

    /// Frame{request{id: 3, send_message{channel_id, body{custom{type: "b", data: payload}}}}}, written by
    /// hand as the redis and nats publishes are: the generated encoder took a third of the generator's time.
    func appendPublish(_ payload: [UInt8], to out: inout [UInt8]) { appendPublish(payload, publisher: 0, to: &out) }

    func appendPublish(_ payload: [UInt8], publisher: Int, to out: inout [UInt8]) {
        let channel = channel(of: publisher)
        var w = ProtoWriter.frame(capacity: payload.count + 32)
        w.message(1) { request in
            request.uint(1, 3)
            request.message(50) { send in
                send.uint(1, channel)
                send.message(2) { body in
                    if textBodies {
                        let seed = payload.count >= 20 ? payload[8..<20].reduce(UInt64(0)) { $0 &* 31 &+ UInt64($1) } : 0
                        body.string(1, BenchText.message(seed: seed))
                    } else {
                        body.message(2) { custom in
                            custom.string(1, "b")
                            custom.bytesField(2, payload)
                        }
                    }
                }
            }
        }
        out.append(contentsOf: w.framed())
    }

    private func framed(_ r: GHRequest) -> [UInt8] {
        var f = GHFrame()
        f.request = r
        return FrameEncoding.framed(f)
    }

    func makeAckCounter() -> AckCounter { ResponseCounter() }

    /// The session's events are "sync completed" then one per record, so
    /// `received` is at most the seq of the last event received.
    func appendSubscriberAck(received: UInt64, to out: inout [UInt8]) {
        var r = GHRequest()
        r.id = 4
        r.ack.eventSeq = received
        out.append(contentsOf: framed(r))
    }

    /// Counts successful response frames by walking length prefixes: a
    /// response (Frame field 2, tag 0x12) whose result is not an error
    /// (Response field 2, tag 0x12, after the id). An error is not an
    /// acknowledgement, so a bench whose sends fail stalls instead of counting them.
    struct ResponseCounter: AckCounter {
        var header: [UInt8] = []
        var remaining = 0
        /// The first bytes of the frame being read, until it can be classified.
        var head: [UInt8] = []
        var classified = true
        mutating func count(_ bytes: UnsafeRawBufferPointer) -> Int {
            var acks = 0
            var i = 0
            while i < bytes.count {
                if remaining == 0 {
                    header.append(bytes[i])
                    i += 1
                    if header.count == 4 {
                        remaining = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
                        header.removeAll(keepingCapacity: true)
                        head.removeAll(keepingCapacity: true)
                        classified = remaining == 0
                    }
                    continue
                }
                let take = min(remaining, bytes.count - i)
                if !classified {
                    head.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + min(take, 24 - head.count))]))
                    if head.count >= 24 || take == remaining {
                        classified = true
                        if Self.isSuccess(head) { acks += 1 }
                    }
                }
                remaining -= take
                i += take
            }
            return acks
        }

        /// Frame{response{id?, result}} with a result other than `error`.
        static func isSuccess(_ head: [UInt8]) -> Bool {
            guard head.first == 0x12 else { return false }
            var i = 1
            while i < head.count && head[i] & 0x80 != 0 { i += 1 }  // the response's length
            i += 1
            if i < head.count && head[i] == 0x08 {  // the id
                i += 1
                while i < head.count && head[i] & 0x80 != 0 { i += 1 }
                i += 1
            }
            return i < head.count && head[i] != 0x12
        }
    }
}

// MARK: Redis

struct RedisWire: BenchWire {
    func subscriberHello(_ index: Int) -> [UInt8] { Array("*2\r\n$9\r\nSUBSCRIBE\r\n$5\r\nbench\r\n".utf8) }
    func publisherHello(_ index: Int) -> [UInt8] { Array("*1\r\n$4\r\nPING\r\n".utf8) }
    var subscriberReadyAcks: Int { 1 }
    var publisherReadyAcks: Int { 1 }

    func appendPublish(_ payload: [UInt8], to out: inout [UInt8]) {
        out.append(contentsOf: "*3\r\n$7\r\nPUBLISH\r\n$5\r\nbench\r\n$\(payload.count)\r\n".utf8)
        out.append(contentsOf: payload)
        out.append(contentsOf: [13, 10])
    }

    func makeAckCounter() -> AckCounter { LineCounter(prefixes: [":", "+PONG"]) }
}

// MARK: NATS

struct NatsWire: BenchWire {
    func subscriberHello(_ index: Int) -> [UInt8] {
        Array("CONNECT {\"verbose\":false,\"pedantic\":false}\r\nSUB bench 1\r\nPING\r\n".utf8)
    }
    func publisherHello(_ index: Int) -> [UInt8] { Array("CONNECT {\"verbose\":false,\"pedantic\":false}\r\nPING\r\n".utf8) }
    var subscriberReadyAcks: Int { 1 }
    var publisherReadyAcks: Int { 1 }
    var publishesPerAck: Int { 32 }

    func appendPublish(_ payload: [UInt8], to out: inout [UInt8]) {
        out.append(contentsOf: "PUB bench \(payload.count)\r\n".utf8)
        out.append(contentsOf: payload)
        out.append(contentsOf: [13, 10])
    }

    func appendBatchEnd(to out: inout [UInt8]) { out.append(contentsOf: "PING\r\n".utf8) }

    func makeAckCounter() -> AckCounter { LineCounter(prefixes: ["PONG"]) }
}

/// Counts text lines that start with one of `prefixes` (valid only before binary payloads arrive).
struct LineCounter: AckCounter {
    let prefixes: [[UInt8]]
    var line: [UInt8] = []

    init(prefixes: [String]) { self.prefixes = prefixes.map { Array($0.utf8) } }

    mutating func count(_ bytes: UnsafeRawBufferPointer) -> Int {
        var acks = 0
        for b in bytes {
            if b == 10 {
                if prefixes.contains(where: { line.starts(with: $0) }) { acks += 1 }
                line.removeAll(keepingCapacity: true)
            } else if line.count < 16 {
                line.append(b)
            }
        }
        return acks
    }
}

// MARK: Sink

/// The trivial sink: a subscriber asks for N records and the sink streams
/// them as fast as it can, to show the load generator's own ceiling.
struct SinkWire: BenchWire {
    let recordsPerSubscriber: Int
    func subscriberHello(_ index: Int) -> [UInt8] { Array("SINK \(recordsPerSubscriber)\n".utf8) }
    func publisherHello(_ index: Int) -> [UInt8] { [] }
    var subscriberReadyAcks: Int { 0 }
    var publisherReadyAcks: Int { 0 }
    func appendPublish(_ payload: [UInt8], to out: inout [UInt8]) {}
    func makeAckCounter() -> AckCounter { LineCounter(prefixes: []) }
}
