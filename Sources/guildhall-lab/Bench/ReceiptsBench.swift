// `guildhall-lab bench receipts`: the receipt questions at scale (docs/features.md,
// issue: "read by k of N" and the first page of readers in a 100,000-member
// channel with 10,000 messages, each under 1 ms). Members respond the way
// people read: in a few jumps each, to random points of the history. The
// structure is the server's `ChannelReceipts`; the figures are per query,
// median and p99 over random messages, plus what storage holds: one row per
// advance, against one row per member per message.

import ArgumentParser
import Foundation
import GuildhallCore
import GuildhallStore

struct ReceiptsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "receipts",
        abstract: "Cost of reader counts and reader pages in a large channel.")

    @Option(help: "Members who respond.") var members = 100_000
    @Option(help: "Messages in the channel.") var messages = 10_000
    @Option(help: "Responses (cursor advances) per member.") var advances = 3
    @Option(help: "Queries of each kind.") var queries = 2_000
    @Flag(help: "Skip writing the advances to a store (disk size and startup load).") var noStore = false
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        guard members > 0, messages > 0, advances > 0, queries > 0 else { throw ValidationError("nothing to measure") }
        var rng = SeededRandom(seed: 42)
        var receipts = ChannelReceipts()
        // Each member's responses: increasing points, the last one anywhere in the history.
        var plans: [[UInt64]] = []
        plans.reserveCapacity(members)
        for _ in 0..<members {
            let last = 1 + rng.next() % UInt64(messages)
            plans.append((1...advances).map { max(1, last * UInt64($0) / UInt64(advances)) })
        }
        let buildStart = DispatchTime.now().uptimeNanoseconds
        var time: UInt64 = 1_800_000_000_000
        for round in 0..<advances {
            for m in 0..<members {
                time += 1
                receipts.respond("member-\(m)", upTo: plans[m][round], at: time)
            }
        }
        let buildSeconds = Double(DispatchTime.now().uptimeNanoseconds - buildStart) / 1e9
        var countNanos: [UInt64] = []
        var pageNanos: [UInt64] = []
        var checksum = 0
        for _ in 0..<queries {
            let seq = 1 + rng.next() % UInt64(messages)
            var t = DispatchTime.now().uptimeNanoseconds
            checksum &+= receipts.readerCount(of: seq)
            countNanos.append(DispatchTime.now().uptimeNanoseconds - t)
            t = DispatchTime.now().uptimeNanoseconds
            checksum &+= receipts.readers(of: seq, limit: 100).0.count
            pageNanos.append(DispatchTime.now().uptimeNanoseconds - t)
        }
        countNanos.sort()
        pageNanos.sort()
        func q(_ a: [UInt64], _ p: Double) -> Double { Double(a[min(a.count - 1, Int(Double(a.count) * p))]) / 1000 }
        let rows = receipts.advances.count
        let naive = members * messages
        let (diskBytes, loadSeconds) = noStore ? (0, 0) : try measureStore(receipts)
        if json {
            print("{\"bench\":\"receipts\",\"members\":\(members),\"messages\":\(messages),\"advances\":\(rows),"
                  + "\"count_us_p50\":\(q(countNanos, 0.5)),\"count_us_p99\":\(q(countNanos, 0.99)),"
                  + "\"page_us_p50\":\(q(pageNanos, 0.5)),\"page_us_p99\":\(q(pageNanos, 0.99)),"
                  + "\"rows\":\(rows),\"index_entries\":\(receipts.indexEntries),\"rows_per_member_per_message\":\(naive),\"build_s\":\(buildSeconds),"
                  + "\"disk_bytes\":\(diskBytes),\"load_s\":\(loadSeconds),\"checksum\":\(checksum)}")
        } else {
            print("bench receipts: \(members) members responding \(advances) times each, \(messages) messages, \(queries) queries of each kind")
            print(String(format: "read by k of N:        p50 %.1f µs  p99 %.1f µs", q(countNanos, 0.5), q(countNanos, 0.99)))
            print(String(format: "first page of readers: p50 %.1f µs  p99 %.1f µs  (100 newest)", q(pageNanos, 0.5), q(pageNanos, 0.99)))
            print("storage: \(rows) advance rows, against \(naive) rows for one per member per message (\(naive / max(1, rows))× fewer)")
            print(String(format: "in memory: reader index %.1f MiB (%d entries), reader counts %.1f KiB", Double(receipts.indexEntries * 4) / 1_048_576,
                         receipts.indexEntries, Double(messages * 16) / 1024))
            print(String(format: "building the state from the advances took %.2f s (%.0f advances/s)", buildSeconds, Double(rows) / buildSeconds))
            if !noStore {
                print(String(format: "on disk (SQLite, receipt_advances): %.1f MiB, %.0f bytes per advance; loading and rebuilding at startup: %.2f s",
                             Double(diskBytes) / 1_048_576, Double(diskBytes) / Double(max(1, rows)), loadSeconds))
            }
        }
    }

    /// Writes the advances through the server's store into a fresh folder;
    /// returns the database's size and the time a startup takes to load them back.
    private func measureStore(_ receipts: ChannelReceipts) throws -> (Int, Double) {
        let folder = NSTemporaryDirectory() + "guildhall-bench-receipts-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var batches: [[StoreWrite]] = []
        for start in stride(from: 0, to: receipts.advances.count, by: 50_000) {
            batches.append(receipts.advances[start..<min(start + 50_000, receipts.advances.count)].map { .receiptAdvance(1, $0) })
        }
        try BenchTargets.write(folder: folder, batches)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("guildhall.db") }
        let bytes = try files.reduce(0) { sum, f in
            sum + ((try FileManager.default.attributesOfItem(atPath: folder + "/" + f)[.size] as? Int) ?? 0)
        }
        let start = DispatchTime.now().uptimeNanoseconds
        let store = try Store(StoreOptions(folder: folder), onCommitted: { _ in }, onRead: { _ in })
        defer { store.close() }
        let snapshot = try store.loadSnapshot(clientIDFloorUID: UInt64.max)
        var loaded = ChannelReceipts()
        for (_, a) in snapshot.receiptAdvances { loaded.load(a) }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        guard loaded.advances.count == receipts.advances.count else { throw BenchError("the store gave back \(loaded.advances.count) advances") }
        return (bytes, seconds)
    }
}
