// Random and mutated WebSocket frames against the real listener (README "Web client"):
// each connection, whatever it sends after its handshake, ends with a
// WebSocket close from the server (wslay's 1002/1009 for a broken stream,
// Guildhall's 4000 + reason for a frame that is not a request or a login
// never made), and the server goes on serving. Seeded: a failure names its seed.

import Foundation
import GuildhallCore
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct WebSocketFuzzTests {
    /// A login request as a client's binary frame: the valid frame the mutations start from.
    static func validFrame(_ token: String) -> [UInt8] {
        var f = GHFrame()
        f.request.id = 1
        f.request.login.token = token
        return WebSocketFrames.clientFrame(0x2, (try? f.serializedBytes()) ?? [])
    }

    /// Bytes a broken or hostile client might send after its handshake.
    static func fuzz(_ i: Int, valid: [UInt8], rng: inout SeededRandom) -> [UInt8] {
        func random(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) } }
        switch i % 10 {
        case 0: return random(Int.random(in: 1...200, using: &rng))
        case 1, 2:  // a valid frame with a few bits flipped
            var bytes = valid
            for _ in 0..<Int.random(in: 1...3, using: &rng) { bytes[Int.random(in: 0..<bytes.count, using: &rng)] ^= 1 << UInt8.random(in: 0...7, using: &rng) }
            return bytes
        case 3: return [0xC2 | UInt8.random(in: 0...0x30, using: &rng)] + Array(valid.dropFirst())  // reserved bits set
        case 4: return WebSocketFrames.clientFrame([0x3, 0x7, 0xB, 0xF][i / 10 % 4], random(10))  // reserved opcodes
        case 5: return WebSocketFrames.clientFrame(0x9, random(126))  // a control frame over 125 bytes
        case 6: return WebSocketFrames.clientFrame(0x9, random(4), fin: false)  // a fragmented control frame
        case 7: return WebSocketFrames.clientFrame(0x0, random(20))  // a continuation with nothing to continue
        case 8: return WebSocketFrames.clientFrame(0x1, [0xFF, 0xFE, 0xC0, 0x80])  // text that is not UTF-8
        default: return [0x82, 0xFF] + [0x80] + random(7) + [1, 2, 3, 4]  // a 64-bit length with its top bit set
        }
    }

    @Test func everyFuzzedConnectionGetsACloseAndTheServerGoesOn() throws {
        let seed = ProcessInfo.processInfo.environment["GUILDHALL_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)
        var rng = SeededRandom(seed: seed)
        let server = try TestServer {
            $0.wsListen = "127.0.0.1:0"
            $0.loginDeadlineMs = 500
        }
        defer { server.stop() }
        let valid = Self.validFrame(server.token("mallory"))
        var peers: [(WebSocketPeer, [UInt8])] = []
        for i in 0..<120 {
            let peer = try WebSocketPeer(port: server.webSocketPort)
            try #require(peer.handshake().hasPrefix("HTTP/1.1 101 "))
            let bytes = Self.fuzz(i, valid: valid, rng: &rng)
            peer.raw.send(bytes)
            peers.append((peer, bytes))
        }
        let deadline = Date().addingTimeInterval(15)
        for (i, (peer, bytes)) in peers.enumerated() {
            while let f = peer.nextFrame(timeout: max(0, deadline.timeIntervalSinceNow)) {
                // A flipped bit that spared the login (in its id, say) logged in: that session ends by logging out.
                if case .login? = f.response.result {
                    var logout = GHRequest()
                    logout.id = 2
                    logout.logout = GHLogout()
                    peer.send(logout)
                }
            }
            #expect(peer.closeCode != nil, "seed \(seed): connection \(i) got no close after \(bytes.prefix(16))")
            // A forbidden frame is a protocol error (1002), text that is not UTF-8 1007; random bytes may hold a close of their own.
            if i % 10 >= 3 { #expect(peer.closeCode == (i % 10 == 8 ? 1007 : 1002), "seed \(seed): connection \(i)") }
        }
        // Still serving, over both transports.
        let peer = try WebSocketPeer(port: server.webSocketPort)
        #expect(peer.handshake().hasPrefix("HTTP/1.1 101 "))
        #expect(peer.login(server.token("alice"))?.userID == "alice", "seed \(seed)")
        let raw = try RawConnection(port: server.port)
        raw.login(server.token("bob"))
        #expect(raw.nextFrame()?.response.login.userID == "bob")
    }
}
