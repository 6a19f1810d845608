// `guildhall-lab bench dedup`: resident bytes per message the resend de-duplication
// table keeps for its window (target: at most 64; it was about 405 when it
// kept whole messages).

import ArgumentParser
import Foundation
import GuildhallServer

struct DedupBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dedup", abstract: "Resident bytes per message in the de-duplication window.")

    @Option(help: "Sends in the window (10,000/s for 300 s is 3,000,000).") var entries = 1_000_000
    @Flag(help: "Print JSON.") var json = false

    func run() {
        let perEntry = Footprint.recentSendsBytesPerEntry(entries: entries)
        if json {
            print("{\"entries\":\(entries),\"bytes_per_entry\":\(perEntry),\"target\":64,\"met\":\(perEntry <= 64)}")
        } else {
            print(String(format: "de-duplication window: %d sends, %.1f resident bytes each (target ≤ 64: %@)", entries, perEntry,
                         perEntry <= 64 ? "met" : "not met"))
        }
    }
}
