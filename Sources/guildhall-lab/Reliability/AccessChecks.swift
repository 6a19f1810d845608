// Authorisation (docs/reliability.md): A3 a guest or a member without SEND_MESSAGES
// cannot send, A4 what a caller may not see is answered as what does not
// exist (for every request kind that names an id), A5 removal and a role
// change take effect at once. "Nothing fanned out" is shown by order, not by
// waiting: a message the owner sends afterwards must be the first one the
// others receive.

import Foundation
import GuildhallClient
import GuildhallWire

enum AccessChecks {
    /// A3: a read-only channel (everyone's SEND_MESSAGES denied there), a member and a guest
    /// subscribed to it. Pass: each send gets 403 and the connection stays (a later call is
    /// answered); nothing stored; the owner's next message is the first anyone receives.
    static func cannotSend(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let server = try ReliabilityServer()
        defer { server.stop() }
        let owner = try ProbeClient(port: server.port), member = try ProbeClient(port: server.port), guest = try ProbeClient(port: server.port)
        for (c, user) in [(owner, "owner"), (member, "mia"), (guest, "gus")] where c.login(server.token(user)) == nil { throw BenchError("login failed") }
        let (guild, channel) = try owner.createGuild("A3", channel: "announcements", invited: true, guests: true)
        var invite = GHInviteMember()
        invite.serverID = guild
        invite.userID = "mia"
        owner.call(.inviteMember(invite))
        var accept = GHAcceptInvite()
        accept.serverID = guild
        member.call(.acceptInvite(accept))
        member.joinAndSubscribe(server: guild, channel: channel, join: false)
        var enter = GHEnterAsGuest()
        enter.serverID = guild
        guest.call(.enterAsGuest(enter))
        guest.joinAndSubscribe(server: guild, channel: channel, join: false, type: .guestChannel)
        var readOnly = GHSetPermissionOverride()
        readOnly.override.serverID = guild
        readOnly.override.channelID = channel
        readOnly.override.roleID = 0
        readOnly.override.permissions = GHPermissionBits(deny: [.sendMessages])
        let overridden = owner.call(.setPermissionOverride(readOnly))
        guard case .override? = overridden?.result else { throw BenchError("the override was refused: \(ProbeClient.text(overridden))") }
        var problems: [String] = []
        for (c, who) in [(member, "member"), (guest, "guest")] {
            let answer = ProbeClient.text(c.sendText("\(who) tries", to: channel))
            if !answer.hasPrefix("error 403 ") { problems.append("\(who)'s send: \(answer)") }
            if c.sendText("\(who) tries again", to: channel) == nil || c.ended { problems.append("\(who)'s connection did not stay") }
        }
        guard case .message? = owner.sendText("the owner speaks", to: channel)?.result else { throw BenchError("the owner's send failed") }
        for (c, who) in [(member, "member"), (guest, "guest")] {
            let first = c.nextMessage(until: Date().addingTimeInterval(5))
            if first?.body.text != "the owner speaks" { problems.append("\(who) first received \(first.map { "'\($0.body.text)'" } ?? "nothing")") }
        }
        let stored = owner.history(channel: channel)?.map(\.body.text) ?? ["history refused"]
        if stored != ["the owner speaks"] { problems.append("stored: \(stored)") }
        return CheckOutcome(passed: problems.isEmpty,
                            figures: problems.isEmpty ? "member and guest each refused twice with 403 and stayed connected; nothing stored or fanned out"
                                                      : problems.joined(separator: "; "))
    }

    /// A4: for every request kind that names an id (RequestIDs' table), an outsider asking about
    /// a private server's ids gets exactly the answer made-up ids of the same shapes get.
    static func foreignIDs(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let server = try ReliabilityServer()
        defer { server.stop() }
        let alice = try ProbeClient(port: server.port), eve = try ProbeClient(port: server.port)
        guard alice.login(server.token("alice")) != nil, eve.login(server.token("eve")) != nil else { throw BenchError("login failed") }
        let (guild, channel) = try alice.createGuild("Private", channel: "secret", invited: true)
        guard case .message(let m)? = alice.sendText("for members only", to: channel, needReceipt: true)?.result else { throw BenchError("send failed") }
        var direct = GHSendDirectMessage()
        direct.peerID = "carol"
        direct.body.text = "hi carol"
        guard case .message(let dm)? = alice.call(.sendDirectMessage(direct))?.result else { throw BenchError("direct send failed") }
        let real = RequestIDs(server: guild, channel: channel, message: m.uid, conversation: dm.channelID, directMessage: dm.uid)
        let fake = RequestIDs(server: guild ^ 0x5A5A, channel: channel + 7_777, message: m.uid + 9_999_999,
                              conversation: dm.channelID + 8_888, directMessage: dm.uid + 9_999_998)
        func answer(_ body: GHRequest.OneOf_Body, hiding ids: RequestIDs) -> String {
            ids.all.reduce(ProbeClient.text(eve.call(body))) { $0.replacingOccurrences(of: String($1), with: "ID") }
        }
        var differing: [String] = []
        let kinds = real.requests.count
        for ((name, foreign), (_, missing)) in zip(real.requests, fake.requests) {
            let a = answer(foreign, hiding: real), b = answer(missing, hiding: fake)
            if a != b { differing.append("\(name): foreign \(a) | missing \(b)") }
        }
        return CheckOutcome(passed: differing.isEmpty,
                            figures: differing.isEmpty ? "\(kinds) request kinds: a foreign id answered exactly as a missing one"
                                                       : "\(differing.count) of \(kinds) kinds differ: " + differing.joined(separator: "; "))
    }

    /// A5: a subscriber is kicked, banned, or loses VIEW_CHANNEL mid-session. Pass: a message
    /// sent once the owner's call is answered never reaches it; a message in another server
    /// it still belongs to (sent after) does, so the session is alive and was read through.
    static func removal(_ profile: ReliabilityProfile, _ seed: UInt64) throws -> CheckOutcome {
        let server = try ReliabilityServer()
        defer { server.stop() }
        let owner = try ProbeClient(port: server.port)
        guard owner.login(server.token("owner")) != nil else { throw BenchError("login failed") }
        let (sideGuild, side) = try owner.createGuild("A5 side", channel: "side")
        var problems: [String] = [], figures: [String] = []
        let changes: [(String, (UInt64, UInt64) -> GHRequest.OneOf_Body)] = [
            ("kick", { guild, _ in var k = GHKickMember(); k.serverID = guild; k.userID = "eve"; return .kickMember(k) }),
            ("ban", { guild, _ in var b = GHBanMember(); b.serverID = guild; b.userID = "eve"; return .banMember(b) }),
            ("role change", { guild, channel in
                var o = GHSetPermissionOverride()
                o.override.serverID = guild
                o.override.channelID = channel
                o.override.roleID = 0
                o.override.permissions = GHPermissionBits(deny: [.viewChannel])
                return .setPermissionOverride(o)
            }),
        ]
        for (name, change) in changes {
            let (guild, channel) = try owner.createGuild("A5 \(name)", channel: "c")
            let eve = try ProbeClient(port: server.port)
            guard eve.login(server.token("eve", device: name)) != nil else { throw BenchError("login failed") }
            eve.joinAndSubscribe(server: guild, channel: channel)
            eve.joinAndSubscribe(server: sideGuild, channel: side)
            owner.sendText("before \(name)", to: channel)
            let before = eve.nextMessage(until: Date().addingTimeInterval(5))?.body.text
            if before != "before \(name)" { problems.append("\(name): before the change got \(before ?? "nothing")") }
            let started = Date()
            let answer = owner.call(change(guild, channel))
            if case .error? = answer?.result { problems.append("\(name): \(ProbeClient.text(answer))"); continue }
            owner.sendText("after \(name)", to: channel)
            owner.sendText("side after \(name)", to: side)
            let seen = eve.nextMessage(until: Date().addingTimeInterval(5))?.body.text
            if seen != "side after \(name)" { problems.append("\(name): next message was \(seen.map { "'\($0)'" } ?? "none")") }
            figures.append(String(format: "%@ shown effective %.0f ms after the call", name, Date().timeIntervalSince(started) * 1000))
        }
        return CheckOutcome(passed: problems.isEmpty,
                            figures: (figures + problems).joined(separator: "; ") + (problems.isEmpty ? "; no later message reached the removed subscriber" : ""))
    }
}
