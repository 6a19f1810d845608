// `guildhall-lab bench member-list` (docs/performance.md "Member lists"): a
// server of N members holding roles is written straight into a new store,
// the server is started on it, O members log in (so the online filter and
// count have something to find), and the owner asks for pages through the
// SDK, each timed from request to answer: the first page (which builds the
// server's order), pages walked by their cursors through the whole list,
// pages of one role, and pages of the online members. It prints the latency
// percentiles of each kind against the goal: a page of a 100k-member server in ≤ 20 ms.

import ArgumentParser
import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallServer
import GuildhallWire

struct MemberListBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "member-list",
        abstract: "Member-list page latency in a server of N members.")

    @Option(help: "Members of the server.") var members = 100_000
    @Option(help: "Members logged in (online).") var online = 200
    @Option(help: "Pages timed of each kind.") var pages = 200
    @Option(help: "Members per page.") var limit = 100
    @Flag(help: "Print JSON.") var json = false

    func run() async throws {
        guard members >= 2, pages >= 1, (1...1_000).contains(limit) else { throw ValidationError("nothing to measure") }
        let folder = NSTemporaryDirectory() + "guildhall-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try BenchTargets.populate(folder: folder, members: members, subscribers: 0, publishers: 0, roles: 5)
        let handle = try ServiceHandle(settings: BenchTargets.inProcessSettings(folder: folder))
        defer { handle.stop() }
        func client(_ user: String) async throws -> GuildhallClient {
            let c = GuildhallClient(port: handle.port, token: FanoutFixture.token(user))
            try await c.connect()
            return c
        }
        var logged: [GuildhallClient] = []
        defer { for c in logged { c.close() } }
        for i in 0..<min(online, members - 1) { logged.append(try await client("m\(i)")) }
        let owner = try await client("owner")
        defer { owner.close() }
        let server = BenchTargets.serverID
        if !json { print("bench member-list: \(members) members, \(logged.count + 1) online, \(pages) pages of \(limit) of each kind") }

        func timed(_ ask: () async throws -> GHMemberList) async throws -> (Double, GHMemberList) {
            let start = DispatchTime.now().uptimeNanoseconds
            let page = try await ask()
            return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6, page)
        }
        let (first, firstPage) = try await timed { try await owner.members.page(of: server, limit: limit) }
        var walked: [Double] = []
        var cursor = firstPage.nextCursor
        for _ in 0..<pages {
            let (ms, page) = try await timed { try await owner.members.page(of: server, cursor: cursor, limit: limit) }
            walked.append(ms)
            cursor = page.nextCursor
        }
        // A role every third member holds (BenchTargets.populate), then the online members, from the start each time.
        var byRole: [Double] = [], onlineOnly: [Double] = []
        var onlineCount: UInt32 = 0
        for _ in 0..<pages {
            byRole.append(try await timed { try await owner.members.page(of: server, limit: limit, role: 2) }.0)
            let (ms, page) = try await timed { try await owner.members.page(of: server, limit: limit, onlineOnly: true) }
            onlineOnly.append(ms)
            onlineCount = page.onlineCount
        }
        func at(_ p: Double, _ s: [Double]) -> Double { s.sorted()[min(s.count - 1, Int(Double(s.count) * p))] }
        let kinds = [("walked", walked), ("role", byRole), ("online", onlineOnly)]
        if json {
            let items = kinds.map { name, s in "\"\(name)_p50_ms\":\(at(0.5, s)),\"\(name)_p99_ms\":\(at(0.99, s))" }
            print("{\"bench\":\"member-list\",\"members\":\(members),\"online\":\(onlineCount),\"limit\":\(limit),\"first_ms\":\(first),"
                  + items.joined(separator: ",") + "}")
        } else {
            print(String(format: "first page (builds the order): %.1f ms; %d members counted online", first, onlineCount))
            for (name, s) in kinds {
                print(String(format: "%-7@ p50 %.2f ms, p99 %.2f ms, max %.2f ms (goal: ≤ 20 ms)", name as NSString, at(0.5, s), at(0.99, s), s.max()!))
            }
        }
    }
}
