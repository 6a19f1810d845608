// `guildhall-lab bench permissions`: what checking permissions costs a send
// (docs/features.md: within 5%). The same load runs, alternating, against a server
// with no roles or overrides and one with N roles, an override per role on
// the channel, three roles per member and each member's own overrides on
// the server and the channel; the ratio of acknowledged sends/s is the
// figure. It also times the check alone, in process, on both.

import ArgumentParser
import Foundation
import GuildhallCore

struct PermissionsBench: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "permissions", abstract: "Sends/s with many roles and overrides against none.")

    @Option(help: "Roles (each with a channel override) in the permissioned server.") var roles = 100
    @Option(help: "Publishers.") var publishers = 10
    @Option(help: "Subscribers.") var subscribers = 10
    @Option(help: "Messages per publisher.") var messages = 5_000
    @Option(help: "Unacknowledged sends per publisher.") var window = 64
    @Option(help: "Runs per server, alternating; medians are compared.") var runs = 3
    @Flag(help: "Print JSON.") var json = false

    func run() throws {
        var shape = LoadShape()
        shape.subscribers = subscribers
        shape.publishers = publishers
        shape.messages = messages
        shape.window = window
        var plain: [Double] = [], permissioned: [Double] = []
        for _ in 0..<runs {
            for (count, into) in [(0, 0), (roles, 1)] {
                let run = try BenchRunner.run(.guildhall, shape: shape, roles: count)
                if let f = run.result.failure { throw BenchError(f) }
                let rate = Double(run.result.published) / run.result.seconds
                if into == 0 { plain.append(rate) } else { permissioned.append(rate) }
            }
        }
        let median = { (v: [Double]) in v.sorted()[v.count / 2] }
        let ratio = median(permissioned) / median(plain)
        let (checkPlain, checkRoles) = (Self.checkNanos(roles: 0), Self.checkNanos(roles: roles))
        if json {
            print("{\"bench\":\"permissions\",\"roles\":\(roles),\"plain_sends_per_s\":\(median(plain)),\"roles_sends_per_s\":\(median(permissioned)),"
                  + "\"ratio\":\(ratio),\"check_ns_plain\":\(checkPlain),\"check_ns_roles\":\(checkRoles),\"met\":\(ratio >= 0.95)}")
        } else {
            print("bench permissions: \(publishers) publishers × \(messages) sends, \(subscribers) subscribers, window \(window), \(runs) runs each")
            print(String(format: "no roles: %.0f sends/s; %d roles and overrides: %.0f sends/s; ratio %.3f (target ≥ 0.95: %@)",
                         median(plain), roles, median(permissioned), ratio, ratio >= 0.95 ? "met" : "not met"))
            print(String(format: "the check alone: %.0f ns with no roles, %.0f ns with %d", checkPlain, checkRoles, roles))
        }
    }

    /// Nanoseconds per `Directory.require` of a send, on a directory made the way `populate` writes it.
    static func checkNanos(roles: Int) -> Double {
        let d = Directory()
        let now: UInt64 = 1
        let server: ServerID = 1, channel: ChannelID = 2
        if let c = try? d.decide.createServer(ServerRecord(id: server, name: "bench", icon: "", custom: "", owner: "owner", openJoin: true, createdAt: now)) { d.take(c) }
        if let c = try? d.decide.createChannel(ChannelRecord(id: channel, serverID: server, name: "c", topic: "", custom: "", createdAt: now), by: "owner") { d.take(c) }
        if let c = try? d.decide.join(server, user: "p0", now: now) { d.take(c) }
        var ids: [RoleID] = []
        for n in 0..<roles {
            guard let decision = try? d.decide.createRole(in: server, by: "owner", name: "r\(n)", position: UInt32(n + 2),
                                                   permissions: PermissionOverride(allow: [.sendMessages, .mention]), now: now) else { continue }
            let r = d.take(decision)
            ids.append(r.id)
            if let o = try? d.decide.setOverride(OverrideRecord(serverID: server, channelID: channel, target: .role(r.id),
                                                         permissions: PermissionOverride(allow: .mention, deny: .mentionEveryone)), by: "owner") { d.take(o) }
        }
        if !ids.isEmpty {
            for id in [ids[0], ids[ids.count / 2], ids[ids.count - 1]] { if let g = try? d.decide.grant(id, to: "p0", in: server, by: "owner") { d.take(g) } }
            for c in [0, channel] {
                if let o = try? d.decide.setOverride(OverrideRecord(serverID: server, channelID: c, target: .member("p0"),
                                                             permissions: PermissionOverride(allow: .sendMessages)), by: "owner") { d.take(o) }
            }
        }
        let rounds = 1_000_000
        let start = DispatchTime.now().uptimeNanoseconds
        var allowed = 0
        for _ in 0..<rounds where (try? d.require(.sendMessages, of: "p0", at: .channel(channel))) != nil { allowed += 1 }
        precondition(allowed == rounds, "the bench's sender must be allowed")
        return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(rounds)
    }
}
