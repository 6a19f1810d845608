// The bench's load generator as the reliability tests use it: a server
// populated as the bench's (members m0... and publishers p0... of one open
// server, with one or more channels), and the generator's subscribers and
// publishers run against it on a thread of their own, finding records in
// their byte streams (timed, ordered, counted; nothing decoded), while the
// test watches the server.

import Foundation
import Synchronization

enum GeneratedLoad {
    /// A server whose members are `subscribers` + `extra` (m0...) and `publishers` (p0...), in
    /// `channels` channels (`BenchTargets.channelIDs`).
    static func server(subscribers: Int, extra: Int = 0, publishers: Int = 1, channels: Int = 1, _ settings: [String] = []) throws -> ReliabilityServer {
        let folder = NSTemporaryDirectory() + "guildhall-reliability-\(UUID().uuidString)"
        try BenchTargets.populate(folder: folder, members: 0, subscribers: subscribers + extra, publishers: publishers, channels: channels)
        return try ReliabilityServer(["small-server-threshold=10"] + settings, folder: folder)
    }

    /// `subscribers` reading subscribers and `publishers` publishers sending `rate` messages of
    /// `bytes` a second in all, for `seconds`, over `channels` channels.
    static func shape(subscribers: Int, publishers: Int = 1, channels: Int = 1, rate: Int, seconds: Int, bytes: Int = 1024) -> LoadShape {
        var shape = LoadShape()
        shape.subscribers = subscribers
        shape.publishers = publishers
        shape.channels = channels
        shape.messages = rate * seconds / publishers
        shape.bytes = bytes
        shape.rate = rate
        shape.ackEvery = 64
        return shape
    }

    /// Runs `shape` against `server` on a thread of its own, calling `meanwhile` every 50 ms
    /// until it is done; its result.
    static func run(_ shape: LoadShape, on server: ReliabilityServer, meanwhile: () -> Void = {}) -> LoadResult {
        run(shape, on: server) { (_: Bool) in meanwhile() }
    }

    /// The same, telling `meanwhile` whether publishing started (every connection ready).
    static func run(_ shape: LoadShape, on server: ReliabilityServer, meanwhile: (_ publishing: Bool) -> Void) -> LoadResult {
        let outcome = Mutex<LoadResult?>(nil), publishing = Mutex(false)
        let port = server.port
        let thread = Thread {
            var wire = GuildhallWire(secret: Array(ReliabilityServer.secret.utf8), server: BenchTargets.serverID, channel: BenchTargets.channelID)
            if shape.channels > 1 { wire.channels = BenchTargets.channelIDs(shape.channels) }
            let generator = LoadGenerator(wire: wire, shape: shape, port: port)
            generator.onReady = { publishing.withLock { $0 = true } }
            let result = generator.run()
            outcome.withLock { $0 = result }
        }
        thread.start()
        while outcome.withLock({ $0 == nil }) {
            meanwhile(publishing.withLock { $0 })
            usleep(50_000)  // the pace of `meanwhile`
        }
        return outcome.withLock { $0! }
    }
}
