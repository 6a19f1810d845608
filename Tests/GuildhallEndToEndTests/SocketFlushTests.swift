// A connection's flush through the socket itself (`TCPConnection.flush`):
// more pieces than one `sendmsg` may carry (IOV_MAX), and more bytes than the
// socket takes at once, still reach the peer whole and in order, the rest by
// libuv's queued write.

import Foundation
import GuildhallLoop
import Testing
@testable import GuildhallServer

@Suite struct SocketFlushTests {
    /// `count` pieces of `size` bytes, piece i filled with byte i % 251, queued shared and flushed at once.
    static func expected(count: Int, size: Int) -> [UInt8] {
        (0..<count).flatMap { i in [UInt8](repeating: UInt8(i % 251), count: size) }
    }

    func flushed(count: Int, size: Int) async throws -> [UInt8] {
        let loop = try LoopListenerTests.AcceptingLoop(port: 0) { c in
            for i in 0..<count { c.enqueue(shared: SharedBytes([UInt8](repeating: UInt8(i % 251), count: size))) }
            c.flush()
        }
        defer { loop.finish() }
        let client = try RawConnection(port: loop.port.load(ordering: .relaxed))
        var got: [UInt8] = []
        let deadline = Date().addingTimeInterval(10)
        while got.count < count * size, Date() < deadline { got += client.receive(timeout: 0.5) }
        return got
    }

    @Test func morePiecesThanOneCallCarriesArriveWholeAndInOrder() async throws {
        let count = 3 * 1024 + 7, size = 8
        #expect(count > TCPConnection.iovMax)
        #expect(try await flushed(count: count, size: size) == Self.expected(count: count, size: size))
    }

    @Test func moreBytesThanTheSocketTakesAtOnceArriveWholeAndInOrder() async throws {
        let count = 64, size = 64 * 1024
        #expect(try await flushed(count: count, size: size) == Self.expected(count: count, size: size))
    }
}
