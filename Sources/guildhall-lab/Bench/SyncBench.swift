// `guildhall-lab bench sync`: the time to sync N offline items to a fresh device
// (docs/features.md). A data folder is filled with N messages that mention one
// member, each with its inbox row (written straight through the store, as
// sends would have left them); a server is started on it; then, per run, a
// device that never synced logs in through the SDK, which acknowledges each
// package, and the time runs from connecting until "sync completed".

import ArgumentParser
import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallServer
import GuildhallStore
import GuildhallWire
import Synchronization

struct SyncBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Time to sync N offline items to a device that never synced.")

    @Option(help: "Offline items waiting for the user.")
    var items = 10_000

    @Option(help: "Items per package (the sync-package-size setting).")
    var packageSize = 200

    @Option(help: "Message body bytes.")
    var bytes = 100

    @Option(help: "Runs, each with a new device; the median is reported.")
    var runs = 5

    @Flag(help: "Print JSON.")
    var json = false

    func run() async throws {
        guard items >= 1, runs >= 1 else { throw ValidationError("nothing to measure") }
        let folder = NSTemporaryDirectory() + "guildhall-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try BenchTargets.populate(folder: folder, members: 2, subscribers: 1, publishers: 0)
        try Self.fillInbox(folder: folder, user: "m0", items: items, bytes: bytes)
        var settings = BenchTargets.inProcessSettings(folder: folder)
        settings.syncPackageSize = packageSize
        let handle = try ServiceHandle(settings: settings)
        defer { handle.stop() }
        if !json { print("bench sync: \(items) offline items of \(bytes) bytes, packages of \(packageSize), \(runs) runs, each on a new device") }
        var samples: [Double] = []
        for run in 0..<runs {
            let seconds = try await Self.syncOnce(port: handle.port, device: "fresh-\(run)", expected: items)
            samples.append(seconds)
            if !json { print(String(format: "run %d: %.1f ms (%.0f items/s)", run + 1, seconds * 1000, Double(items) / seconds)) }
        }
        let sorted = samples.sorted()
        let median = sorted[sorted.count / 2]
        if json {
            print("{\"bench\":\"sync\",\"items\":\(items),\"package_size\":\(packageSize),\"bytes\":\(bytes),\"median_ms\":\(median * 1000),"
                  + "\"min_ms\":\(sorted.first! * 1000),\"max_ms\":\(sorted.last! * 1000),\"items_per_s\":\(Double(items) / median)}")
        } else {
            print(String(format: "median %.1f ms, min %.1f, max %.1f; %.0f items/s (goal: under 1 s for 10,000)",
                         median * 1000, sorted.first! * 1000, sorted.last! * 1000, Double(items) / median))
        }
    }

    /// Seconds from connecting until sync completed, with every item received once.
    static func syncOnce(port: Int, device: String, expected: Int) async throws -> Double {
        let watcher = SyncWatcher()
        let token = AccessToken(user: "m0", device: device, expiry: systemClock() / 1000 + 3600).signed(with: Array(BenchTargets.secret.utf8))
        let client = GuildhallClient(port: port, token: token)
        defer { client.close() }
        client.addListener(watcher)
        let start = DispatchTime.now().uptimeNanoseconds
        try await client.connect()
        let deadline = Date().addingTimeInterval(120)
        while watcher.completedAt.load(ordering: .acquiring) == 0 {
            if Date() > deadline { throw BenchError("sync stalled at \(watcher.items.load(ordering: .relaxed)) of \(expected) items") }
            try await Task.sleep(nanoseconds: 200_000)
        }
        let got = watcher.items.load(ordering: .relaxed)
        guard got == expected else { throw BenchError("synced \(got) items, expected \(expected)") }
        return Double(watcher.completedAt.load(ordering: .acquiring) - start) / 1e9
    }

    /// Writes `items` messages mentioning `user`, each with its inbox row.
    static func fillInbox(folder: String, user: UserID, items: Int, bytes: Int) throws {
        let now = systemClock()
        var ids = UIDGenerator(node: 0)
        let text = String(repeating: "x", count: bytes)
        var batches: [[StoreWrite]] = []
        for start in stride(from: 0, to: items, by: 1000) {
            var writes: [StoreWrite] = []
            for i in start..<min(items, start + 1000) {
                let uid = ids.next(nowMillis: now)
                writes.append(.message(MessageRecord(uid: uid, serverID: BenchTargets.serverID, channelID: BenchTargets.channelID,
                                                     seq: UInt64(i + 1), sender: "owner", sentTime: now, content: .text(text),
                                                     mentions: [user], mentionAll: false, needReceipt: false, clientID: "")))
                writes.append(.inbox(InboxRow(ord: UInt64(i + 1), user: user, at: now, messageUID: uid)))
            }
            batches.append(writes)
        }
        try BenchTargets.write(folder: folder, batches)
    }
}

/// Counts offline items and notes when sync completed.
final class SyncWatcher: GuildhallListener {
    let items = Atomic<Int>(0)
    let completedAt = Atomic<UInt64>(0)
    func onMessage(_ message: GHChannelMessage, left: Int, offline: Bool, hasPackage: Bool) {
        if offline { items.add(1, ordering: .relaxed) }
    }
    func onOfflineMessageSyncCompleted() {
        completedAt.store(DispatchTime.now().uptimeNanoseconds, ordering: .releasing)
    }
}
