// `guildhall-lab bench search` (docs/performance.md "Search"): a data folder
// is filled with N chat-like messages (BenchText: English and Chinese) over
// C channels, written straight through the store in transactions of 512 as
// a loaded server commits them, once with the search index and once
// without, timed; the server is started on the indexed folder, and the
// owner runs S searches of one or two words (English, Chinese, mixed), and
// S/5 of a three-letter prefix apart, through the SDK, each timed from
// request to answer. It prints
// the latency percentiles, the write rate with the index against without,
// and the index's bytes per message.

import ArgumentParser
import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallServer
import GuildhallStore
import Synchronization

struct SearchBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search latency over N stored messages, and the index's cost to writes and disk.")

    @Option(help: "Messages stored.") var messages = 1_000_000
    @Option(help: "Channels they are spread over (all searched).") var channels = 100
    @Option(help: "Searches timed (after 10 not timed).") var searches = 100
    @Option(help: "Messages written without the index for the write comparison (0: skip it).") var compareMessages = 200_000
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        guard messages >= 1, channels >= 1, searches >= 1 else { throw ValidationError("nothing to measure") }
        let folder = NSTemporaryDirectory() + "guildhall-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try BenchTargets.populate(folder: folder, members: 2, subscribers: 0, publishers: 0, channels: channels)
        if !json { print("bench search: \(messages) messages over \(channels) channels, \(searches) searches") }
        let indexed = try Self.write(messages, channels: channels, folder: folder, searchIndex: true)
        var ratio = 0.0, comparedRate = 0.0, indexedRate = Double(messages) / indexed
        if compareMessages > 0 {
            // The same count both ways, alternating, so the machine's swings fall on both.
            let n = min(compareMessages, messages)
            var with: [Double] = [], without: [Double] = []
            for round in 0..<3 {
                for index in round % 2 == 0 ? [true, false] : [false, true] {
                    let other = NSTemporaryDirectory() + "guildhall-bench-\(UUID().uuidString)"
                    defer { try? FileManager.default.removeItem(atPath: other) }
                    try BenchTargets.populate(folder: other, members: 2, subscribers: 0, publishers: 0, channels: channels)
                    let rate = Double(n) / (try Self.write(n, channels: channels, folder: other, searchIndex: index))
                    if index { with.append(rate) } else { without.append(rate) }
                }
            }
            indexedRate = with.sorted()[1]
            comparedRate = without.sorted()[1]
            ratio = indexedRate / comparedRate
        }

        let settings = BenchTargets.inProcessSettings(folder: folder)
        let handle = try ServiceHandle(settings: settings)
        defer { handle.stop() }
        let token = AccessToken(user: "owner", device: "bench", expiry: systemClock() / 1000 + 3600).signed(with: Array(BenchTargets.secret.utf8))
        let client = GuildhallClient(port: handle.port, token: token)
        defer { client.close() }
        try await client.connect()
        var random = SeededRandom(seed: 20261127)
        // Words (the goal's queries), then prefixes apart: a short prefix of
        // common words merges every word it begins, a cost of its own.
        let words = try await Self.timed(client, (0..<(searches + 10)).map { _ in Self.query(&random) })
        let prefixes = try await Self.timed(client, (0..<(searches / 5 + 10)).map { _ in String(BenchText.word(BenchText.english, &random).prefix(3)) + "*" })
        let sorted = words.samples.sorted(), prefixSorted = prefixes.samples.sorted()
        func at(_ p: Double, _ s: [Double] = sorted) -> Double { s[min(s.count - 1, Int(Double(s.count) * p))] * 1000 }
        let store = try Store(StoreOptions(folder: folder), onCommitted: { _ in }, onRead: { _ in })
        let perMessage = Double(try store.searchIndexBytes()) / Double(messages)
        _ = store.close()
        if json {
            print("{\"bench\":\"search\",\"messages\":\(messages),\"channels\":\(channels),\"searches\":\(searches),\"p50_ms\":\(at(0.5)),"
                  + "\"p99_ms\":\(at(0.99)),\"max_ms\":\(sorted.last! * 1000),\"hits_per_search\":\(words.hits),"
                  + "\"prefix_p50_ms\":\(at(0.5, prefixSorted)),\"prefix_p99_ms\":\(at(0.99, prefixSorted)),"
                  + "\"writes_per_s_indexed\":\(indexedRate),\"writes_per_s_unindexed\":\(comparedRate),\"write_ratio\":\(ratio),"
                  + "\"index_bytes_per_message\":\(perMessage)}")
        } else {
            print(String(format: "words: p50 %.1f ms, p99 %.1f ms, max %.1f ms (goal: p99 ≤ 50 ms); %.1f hits per page; slowest: %@",
                         at(0.5), at(0.99), sorted.last! * 1000, words.hits, words.slowest))
            print(String(format: "prefixes of 3 letters: p50 %.1f ms, p99 %.1f ms; slowest: %@", at(0.5, prefixSorted), at(0.99, prefixSorted), prefixes.slowest))
            if compareMessages > 0 {
                // Timed until the store closes, which waits for the index to hold every message: how fast it can be kept up.
                print(String(format: "store writes until indexed: %.0f messages/s with the index, %.0f without: %.2f× (a loaded server's cost: bench store)",
                             indexedRate, comparedRate, ratio))
            }
            print(String(format: "index: %.0f bytes per message", perMessage))
        }
    }

    /// One or two words: English, Chinese, or one of each.
    static func query(_ random: inout SeededRandom) -> String {
        switch random.next() % 4 {
        case 0: BenchText.word(BenchText.english, &random)
        case 1: BenchText.word(BenchText.chinese, &random)
        case 2: BenchText.word(BenchText.english, &random) + " " + BenchText.word(BenchText.english, &random)
        default: BenchText.word(BenchText.english, &random) + " " + BenchText.word(BenchText.chinese, &random)
        }
    }

    /// Each query's seconds from request to answer (the first 10 not kept), the hits per page and the slowest query.
    static func timed(_ client: GuildhallClient, _ queries: [String]) async throws -> (samples: [Double], hits: Double, slowest: String) {
        var samples: [Double] = [], hits = 0, slowest = (seconds: 0.0, query: "")
        for (n, query) in queries.enumerated() {
            let start = DispatchTime.now().uptimeNanoseconds
            let page = try await client.messages.search(query, in: .server(BenchTargets.serverID))
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            guard n >= 10 else { continue }
            samples.append(seconds)
            hits += page.hits.count
            if seconds > slowest.seconds { slowest = (seconds, query) }
        }
        return (samples, Double(hits) / Double(max(samples.count, 1)), slowest.query)
    }

    /// Writes `count` messages round the channels in transactions of 512; the seconds it took.
    static func write(_ count: Int, channels: Int, folder: String, searchIndex: Bool) throws -> Double {
        let ids = BenchTargets.channelIDs(channels)
        var options = StoreOptions(folder: folder)
        options.searchIndex = searchIndex
        let committed = Atomic<Int>(0)
        let failure = Mutex<String?>(nil)
        let store = try Store(options, onCommitted: { outcomes in
            if let e = outcomes.first(where: { $0.error != nil })?.error { failure.withLock { $0 = e.description } }
            committed.add(outcomes.count, ordering: .releasing)
        }, onRead: { _ in })
        defer { _ = store.close() }
        let start = DispatchTime.now().uptimeNanoseconds
        var uids = UIDGenerator(node: 0)
        var seqs = [UInt64](repeating: 0, count: ids.count)
        let now = systemClock()
        var jobs = 0
        for first in stride(from: 0, to: count, by: 512) {
            var writes: [StoreWrite] = []
            for i in first..<min(count, first + 512) {
                let c = i % ids.count
                seqs[c] += 1
                writes.append(.message(MessageRecord(uid: uids.next(nowMillis: now), serverID: BenchTargets.serverID, channelID: ids[c], seq: seqs[c],
                                                     sender: "owner", sentTime: now, content: .text(BenchText.message(seed: UInt64(i))),
                                                     mentions: [], mentionAll: false, needReceipt: false, clientID: "")))
            }
            jobs += 1
            store.writer.submit(WriteJob(ticket: UInt64(jobs), writes: writes))
            // A few transactions ahead at most, as a server's writer sees them.
            while jobs - committed.load(ordering: .acquiring) > 4 { usleep(200) }
        }
        while committed.load(ordering: .acquiring) < jobs { usleep(200) }
        if let f = failure.withLock({ $0 }) { throw BenchError("writing the messages failed: \(f)") }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
}
