// `guildhall-lab bench presence` (docs/performance.md "Presence"): N members
// of one small server are online (each hears the others by the small-server
// exemption) and F of them flip between idle and active (`SetIdle`) as fast
// as their answers come back, for S seconds. It counts the flips the server
// took, the presence frames and entries the members heard, and the frames
// per member per second, which coalescing holds at one per
// `presence-frame-interval-ms` however fast the flips come, and times, from
// one flipper's change to the first frame a listening member gets with it,
// how late presence is heard (coalescing makes it up to an interval late).

import ArgumentParser
import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallServer
import GuildhallWire
import Synchronization

struct PresenceBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "presence",
        abstract: "Presence changes fanned out to the online members of a small server, and coalescing.")

    @Option(help: "Members online in the server.") var members = 500
    @Option(help: "Of them, how many flip idle and active.") var flippers = 50
    @Option(help: "Seconds of flipping.") var seconds = 10
    @Flag(help: "Print JSON.") var json = false

    /// What the listening members heard.
    final class Heard: GuildhallListener, @unchecked Sendable {
        let frames = Atomic<Int>(0)
        let entries = Atomic<Int>(0)
        /// For the timed member: when it first heard each state of the timed flipper.
        let firstHeard = Mutex<[GHPresenceStatus: UInt64]>([:])
        let timed: String?

        init(timing user: String?) { timed = user }

        func onPresence(_ presences: [GHPresence]) {
            frames.add(1, ordering: .relaxed)
            entries.add(presences.count, ordering: .relaxed)
            guard let timed, let p = presences.first(where: { $0.userID == timed }) else { return }
            let now = DispatchTime.now().uptimeNanoseconds
            firstHeard.withLock { if $0[p.status] == nil { $0[p.status] = now } }
        }
    }

    /// What the flippers did.
    final class Flips: Sendable {
        let count = Atomic<Int>(0)
        /// Milliseconds from the timed flipper's change until the timing member heard it.
        let lateness = Mutex<[Double]>([])
    }

    func run() async throws {
        guard members >= 2, (1..<members).contains(flippers), seconds >= 1 else { throw ValidationError("nothing to measure") }
        let folder = NSTemporaryDirectory() + "guildhall-bench-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try BenchTargets.populate(folder: folder, members: members, subscribers: 0, publishers: 0)
        var settings = BenchTargets.inProcessSettings(folder: folder)
        settings.smallServerThreshold = members + 1
        let handle = try ServiceHandle(settings: settings)
        defer { handle.stop() }
        if !json { print("bench presence: \(members) members online in one small server, \(flippers) flipping idle/active for \(seconds) s") }
        var clients: [GuildhallClient] = []
        defer { for c in clients { c.close() } }
        var listeners: [Heard] = []
        for i in 0..<(members - 1) {
            let c = GuildhallClient(port: handle.port, token: FanoutFixture.token("m\(i)"))
            // The last member times the first flipper's changes.
            let heard = Heard(timing: i == members - 2 ? "m0" : nil)
            c.addListener(heard)
            try await c.connect()
            clients.append(c)
            listeners.append(heard)
        }
        // Everyone has logged in: what they heard of each other's logins is not counted.
        try await Task.sleep(nanoseconds: 2 * UInt64(settings.presenceFrameIntervalMs) * 1_000_000)
        for l in listeners { _ = l.frames.exchange(0, ordering: .relaxed); _ = l.entries.exchange(0, ordering: .relaxed) }

        let timer = listeners.last!
        let flips = Flips()
        let end = DispatchTime.now().uptimeNanoseconds + UInt64(seconds) * 1_000_000_000
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, c) in clients.prefix(flippers).enumerated() {
                group.addTask {
                    var idle = true
                    while DispatchTime.now().uptimeNanoseconds < end {
                        if n == 0 {
                            // The timed flipper: one change a second, timed until a member hears it.
                            timer.firstHeard.withLock { $0 = [:] }
                            let at = DispatchTime.now().uptimeNanoseconds
                            try await c.people.setIdle(idle)
                            let want: GHPresenceStatus = idle ? .presenceIdle : .presenceOnline
                            while DispatchTime.now().uptimeNanoseconds < at + 3_000_000_000, timer.firstHeard.withLock({ $0[want] }) == nil {
                                try await Task.sleep(nanoseconds: 1_000_000)
                            }
                            if let heard = timer.firstHeard.withLock({ $0[want] }) { flips.lateness.withLock { $0.append(Double(heard - at) / 1e6) } }
                        } else {
                            try await c.people.setIdle(idle)
                        }
                        flips.count.add(1, ordering: .relaxed)
                        idle.toggle()
                    }
                }
            }
            try await group.waitForAll()
        }
        // The rate counts what was heard while flipping; the entries, everything once it settled.
        let framesWhileFlipping = listeners.reduce(0) { $0 + $1.frames.load(ordering: .relaxed) }
        try await Task.sleep(nanoseconds: 2 * UInt64(settings.presenceFrameIntervalMs) * 1_000_000)
        let frames = listeners.reduce(0) { $0 + $1.frames.load(ordering: .relaxed) }
        let entries = listeners.reduce(0) { $0 + $1.entries.load(ordering: .relaxed) }
        let flipped = flips.count.load(ordering: .relaxed)
        let late = flips.lateness.withLock { $0.sorted() }
        func at(_ p: Double) -> Double { late.isEmpty ? 0 : late[min(late.count - 1, Int(Double(late.count) * p))] }
        let perMember = Double(framesWhileFlipping) / Double(listeners.count) / Double(seconds)
        if json {
            print("{\"bench\":\"presence\",\"members\":\(members),\"flippers\":\(flippers),\"seconds\":\(seconds),\"flips_per_s\":\(Double(flipped) / Double(seconds)),"
                  + "\"frames\":\(frames),\"entries\":\(entries),\"frames_per_member_per_s\":\(perMember),"
                  + "\"heard_p50_ms\":\(at(0.5)),\"heard_p99_ms\":\(at(0.99))}")
        } else {
            print(String(format: "%.0f flips/s taken; members heard %d frames carrying %d entries: %.2f frames per member per second (coalescing's bound: %.2f)",
                         Double(flipped) / Double(seconds), frames, entries, perMember, 1000 / Double(settings.presenceFrameIntervalMs)))
            print(String(format: "a change heard after: p50 %.0f ms, p99 %.0f ms over %d timed changes (a frame interval is %d ms)",
                         at(0.5), at(0.99), late.count, settings.presenceFrameIntervalMs))
        }
    }
}
