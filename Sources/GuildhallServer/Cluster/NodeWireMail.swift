// Mail between homes on different nodes (Proto/node.proto, NodeWire.swift,
// HomeMail.swift): filed items, offline-sync items to dress, auto-subscribe
// reports, subscription tallies and received ranges. Values only.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallStore
import GuildhallWire

extension GHNodeHomeMail {
    init(_ m: HomeMail) {
        self.init()
        switch m {
        case .file(let items, let token): file = .with { $0.items = items.map(GHNodeMailedItem.init); $0.token = token }
        case .filed(let token): filed = token
        case .dress(let user, let items, let token):
            dress = .with {
                $0.user = user
                $0.token = token
                $0.items = items.map { item in
                    .with {
                        $0.ord = item.ord
                        $0.event = Data(item.event)
                        if let message = item.message { $0.message = GHLogMessage(message) }
                    }
                }
            }
        case .dressed(let token, let events):
            dressed = .with {
                $0.token = token
                $0.events = events.map { e in .with { if let e { $0.event = e } } }
            }
        case .autoChannels(let user, let channels):
            autoChannels = .with { $0.user = user; $0.channels = channels.map { c in .with { $0.id = c.id; $0.activity = c.activity } } }
        case .autoTouch(let user, let channel, let activity):
            autoTouch = .with { $0.user = user; $0.channelID = channel; $0.activity = activity }
        case .autoLevels(let user, let levels, let uncovered):
            autoLevels = .with {
                $0.user = user
                $0.uncovered = Int64(uncovered)
                $0.levels = levels.sorted { $0.key < $1.key }.map { channel, level in
                    .with { $0.channelID = channel; $0.level = UInt32(level?.rawValue ?? 0) }
                }
            }
        case .subscriptionTallies(let changes):
            subscriptionTallies.changes = changes.map { t in
                .with { $0.user = t.user; $0.kind = Int32(t.kind); $0.serverID = t.server; $0.channelID = t.channel; $0.holds = t.holds }
            }
        case .receivedRange(let user, let range, let except):
            receivedRange = .with { $0.user = user; $0.range = range; $0.except = except }
        case .presence(let list): presence.presences = list
        case .presenceAsked(let users, let session): presenceAsked = .with { $0.users = users; $0.session = session }
        case .profiles(let list, let changed):
            profiles = .with { $0.profiles = list.map(GHUserProfile.init); $0.changed = changed }
        case .profilesAsked(let users): profilesAsked.users = users
        case .directCheck(let token, let from, let to): directCheck = .with { $0.token = token; $0.from = from; $0.to = to }
        case .directChecked(let token, let verdicts):
            directChecked = .with {
                $0.token = token
                $0.verdicts = verdicts.map { v in
                    .with { $0.user = v.user; $0.home = v.home; $0.serverMatesOnly = v.serverMatesOnly; $0.sharesAServer = v.sharesAServer }
                }
            }
        case .directPrivacyChanged(let user): directPrivacyChanged = user
        }
    }

    func value() throws -> HomeMail {
        switch mail {
        case .file(let f): return .file(try f.items.map { try $0.value() }, token: f.token)
        case .filed(let token): return .filed(token: token)
        case .dress(let d):
            return .dress(user: d.user, items: try d.items.map { i in
                InboxItem(ord: i.ord, message: i.hasMessage ? try i.message.record() : nil, event: [UInt8](i.event))
            }, token: d.token)
        case .dressed(let d): return .dressed(token: d.token, events: d.events.map { $0.hasEvent ? $0.event : nil })
        case .autoChannels(let a): return .autoChannels(user: a.user, a.channels.map { AutoChannel(id: $0.id, activity: $0.activity) })
        case .autoTouch(let t): return .autoTouch(user: t.user, channel: t.channelID, activity: t.activity)
        case .autoLevels(let a):
            var levels: [ChannelID: ChannelLevel?] = [:]
            for l in a.levels {
                if l.level == 0 {
                    levels[l.channelID] = .some(nil)
                } else {
                    guard let level = ChannelLevel(rawValue: Int(l.level)) else { throw NodeWireError("channel level \(l.level) is not known") }
                    levels[l.channelID] = level
                }
            }
            return .autoLevels(user: a.user, levels, uncovered: Int(a.uncovered))
        case .subscriptionTallies(let t):
            return .subscriptionTallies(try t.changes.map { c in
                guard let kind = SubscriptionKind(rawValue: Int(c.kind)) else { throw NodeWireError("subscription kind \(c.kind) is not known") }
                return TallyChange(user: c.user, kind: kind, target: SubscriptionTarget(server: c.serverID, channel: c.channelID), holds: c.holds)
            })
        case .receivedRange(let r): return .receivedRange(user: r.user, r.range, except: r.except)
        case .presence(let p): return .presence(p.presences)
        case .presenceAsked(let a): return .presenceAsked(users: a.users, session: a.session)
        case .profiles(let p): return .profiles(p.profiles.map(UserProfile.init), changed: p.changed)
        case .profilesAsked(let a): return .profilesAsked(users: a.users)
        case .directCheck(let c): return .directCheck(token: c.token, from: c.from, to: c.to)
        case .directChecked(let c):
            return .directChecked(token: c.token, c.verdicts.map {
                DirectVerdict(user: $0.user, home: $0.home, serverMatesOnly: $0.serverMatesOnly, sharesAServer: $0.sharesAServer)
            })
        case .directPrivacyChanged(let user): return .directPrivacyChanged(user)
        case nil: throw NodeWireError("mail holds nothing")
        }
    }
}

extension GHNodeMailedItem {
    init(_ item: MailedItem) {
        self.init()
        user = item.user
        switch item.stored {
        case .event(let bytes): event = Data(bytes)
        case .message(let uid): messageUid = uid
        }
        switch item.live {
        case .push(let payload): push = payload.data
        case .pushExceptOrigin(let payload, let origin): pushExceptOrigin = .with { $0.payload = payload.data; $0.origin = origin }
        case .noted: noted = GHNodeNothing()
        }
        owesPush = item.owesPush
    }

    func value() throws -> MailedItem {
        let s: MailedItem.Stored
        switch stored {
        case .event(let bytes): s = .event([UInt8](bytes))
        case .messageUid(let uid): s = .message(uid)
        case nil: throw NodeWireError("a mailed item holds no stored form")
        }
        let l: MailedItem.Live
        switch live {
        case .push(let payload): l = .push(SharedBytes(payload))
        case .pushExceptOrigin(let p): l = .pushExceptOrigin(SharedBytes(p.payload), origin: p.origin)
        case .noted: l = .noted
        case nil: throw NodeWireError("a mailed item holds no live form")
        }
        return MailedItem(user: user, stored: s, live: l, owesPush: owesPush)
    }
}
