// `guildhall-lab bench members`: the cost of a send with S CHANNEL_MSG
// subscribers, in servers of different member counts. Fan-out costs
// O(recipients), so the member count must not change the figures.
//
// For each member count, a data folder is filled with a server of that many
// members (written straight through the store), a server is started on it,
// S members connect and subscribe, and one publisher sends M messages with
// W in flight. The time runs from the first send until every subscriber has
// every message. Runs alternate between the sizes; medians are reported.

import ArgumentParser
import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallServer
import GuildhallWire
import Synchronization

struct MembersBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "members",
        abstract: "Cost of a send with S subscribers in servers of several sizes.")

    @Option(help: "Member counts to compare, comma separated.")
    var members = "1000,100000"

    @Option(help: "Subscribers (CHANNEL_MSG) per server.")
    var subscribers = 50

    @Option(help: "Messages per run.")
    var messages = 2000

    @Option(help: "Sends in flight.")
    var window = 32

    @Option(help: "Message body bytes.")
    var bytes = 100

    @Option(help: "Runs per size (alternating); the median is reported.")
    var runs = 3

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        let sizes = members.split(separator: ",").compactMap { Int($0) }
        guard !sizes.isEmpty, subscribers >= 1, messages >= 1 else { throw ValidationError("nothing to measure") }
        if !json {
            print("bench members: \(subscribers) subscribers, \(messages) messages of \(bytes) bytes, \(window) in flight, \(runs) runs per size")
            print("servers count as large (small-server-threshold = 10), so only subscriptions select recipients")
        }
        var fixtures: [FanoutFixture] = []
        for size in sizes { fixtures.append(try await FanoutFixture(members: size, subscribers: subscribers)) }
        defer { for f in fixtures { f.close() } }
        var samples: [Int: [Double]] = [:]
        for _ in 0..<runs {
            for f in fixtures {
                samples[f.members, default: []].append(try await f.measure(messages: messages, window: window, bytes: bytes))
            }
        }
        var rows: [(Int, Double)] = []
        for size in sizes {
            let sorted = samples[size]!.sorted()
            rows.append((size, sorted[sorted.count / 2]))
        }
        let base = rows.first!.1
        if json {
            let items = rows.map { size, secs in
                "{\"members\":\(size),\"seconds\":\(secs),\"us_per_send\":\(secs * 1e6 / Double(messages)),\"deliveries_per_s\":\(Double(messages * subscribers) / secs)}"
            }
            print("{\"bench\":\"members\",\"subscribers\":\(subscribers),\"messages\":\(messages),\"bytes\":\(bytes),\"results\":[\(items.joined(separator: ","))]}")
        } else {
            print("members     µs/send   deliveries/s   vs first")
            for (size, secs) in rows {
                let line = String(format: "%-10d %8.1f %14.0f %9.1f%%", size, secs * 1e6 / Double(messages),
                                  Double(messages * subscribers) / secs, (secs / base - 1) * 100)
                print(line)
            }
        }
    }
}

/// One server of a given size with its subscribers connected.
final class FanoutFixture: @unchecked Sendable {
    let members: Int
    let folder: String
    let handle: ServiceHandle
    let publisher: GuildhallClient
    let subscribers: [GuildhallClient]
    let counter: DeliveryCounter
    let channel: UInt64
    static let secret = BenchTargets.secret

    init(members: Int, subscribers count: Int) async throws {
        self.members = members
        folder = NSTemporaryDirectory() + "guildhall-bench-\(UUID().uuidString)"
        let (serverID, channelID) = try Self.populate(folder: folder, members: members, subscribers: count)
        channel = channelID
        var settings = BenchTargets.inProcessSettings(folder: folder)
        settings.smallServerThreshold = 10
        settings.limitChannelMessages = 100
        handle = try ServiceHandle(settings: settings)
        publisher = GuildhallClient(port: handle.port, token: Self.token("owner"))
        try await publisher.connect()
        counter = DeliveryCounter()
        var subs: [GuildhallClient] = []
        for i in 0..<count {
            let c = GuildhallClient(port: handle.port, token: Self.token("m\(i)"))
            c.addListener(counter)
            try await c.connect()
            let result = try await c.subscriptions.subscribeChannel(SubscribeChannelParam(subscribeType: .channelMsg,
                                                                                         targets: [ChannelTarget(serverID: serverID, channelID: channelID)]))
            guard result.first?.status == .targetOk else { throw ValidationError("subscribe failed: \(result)") }
            subs.append(c)
        }
        subscribers = subs
    }

    static func token(_ user: String) -> String {
        AccessToken(user: user, device: "bench", expiry: systemClock() / 1000 + 3600).signed(with: Array(secret.utf8))
    }

    /// Writes a server with `members` members and one channel straight into a new store.
    static func populate(folder: String, members: Int, subscribers: Int = 0) throws -> (UInt64, UInt64) {
        try BenchTargets.populate(folder: folder, members: members, subscribers: subscribers, publishers: 0)
        return (BenchTargets.serverID, BenchTargets.channelID)
    }

    /// Seconds from the first send until every subscriber has every message.
    func measure(messages: Int, window: Int, bytes: Int) async throws -> Double {
        let expected = counter.reset() + messages * subscribers.count
        let body = String(repeating: "x", count: bytes)
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            var sent = 0
            while sent < messages {
                let batch = min(window, messages - sent)
                for _ in 0..<batch { group.addTask { _ = try await self.publisher.messages.send(body, to: self.channel) } }
                for _ in 0..<batch { try await group.next() }
                sent += batch
            }
        }
        let deadline = Date().addingTimeInterval(120)
        while counter.total < expected {
            if Date() > deadline { throw ValidationError("deliveries stalled at \(counter.total) of \(expected)") }
            try await Task.sleep(nanoseconds: 200_000)
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    func close() {
        for c in subscribers { c.close() }
        publisher.close()
        handle.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }
}

/// Counts messages received by every subscriber.
final class DeliveryCounter: GuildhallListener {
    private let count = Atomic<Int>(0)
    func onMessage(_ message: GHChannelMessage) { count.add(1, ordering: .relaxed) }
    var total: Int { count.load(ordering: .relaxed) }
    /// Returns the current total (the baseline for the next run).
    func reset() -> Int { total }
}
