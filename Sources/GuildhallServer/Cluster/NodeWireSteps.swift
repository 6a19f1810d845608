// A home's steps for a gateway on another node (Proto/node.proto, NodeWire.swift):
// session commands, runs of one event to many sessions, channel places,
// interest changes and channel events. Values only.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallWire

extension SharedBytes {
    var data: Data { Data(bytes: base, count: count) }
    convenience init(_ data: Data) { self.init([UInt8](data)) }
}

extension GHNodeGatewayStep {
    init(_ s: GatewayStep) {
        self.init()
        switch s {
        case .command(let order): command = .with { $0.key = order.key; $0.command = GHNodeSessionCommand(order.command) }
        case .event(let payload, let recipients):
            event = .with {
                $0.payload = payload.data
                $0.recipients = recipients.map { r in
                    .with {
                        $0.key = r.key
                        $0.cursor = r.cursor
                        if let u = r.unread {
                            $0.unread = .with {
                                $0.unreadCount = u.unreadCount; $0.mentionedCount = u.mentionedCount
                                $0.ackTimestamp = u.ackTimestamp; $0.readSeq = u.readSeq
                            }
                        }
                    }
                }
            }
        case .place(let channel, let server): place = .with { $0.channelID = channel; if let server { $0.serverID = server } }
        case .interest(let update): interest = GHNodeInterest(update)
        case .channelEvent(let e): channelEvent = GHNodeChannelEvent(e)
        case .replayed(let channel, let upTo): replayed = .with { $0.channelID = channel; $0.upTo = upTo }
        case .webhookAnswered(let token, let status, let body): webhookAnswered = .with { $0.token = token; $0.status = Int32(status); $0.body = body }
        }
    }

    func value() throws -> GatewayStep {
        switch step {
        case .command(let order): return .command(SessionOrder(key: order.key, command: try order.command.value()))
        case .event(let run):
            return .event(SharedBytes(run.payload), run.recipients.map { r in
                let unread = r.hasUnread
                    ? FrameEncoding.RecipientUnread(unreadCount: r.unread.unreadCount, mentionedCount: r.unread.mentionedCount,
                                                    ackTimestamp: r.unread.ackTimestamp, readSeq: r.unread.readSeq)
                    : nil
                return EventRecipient(key: r.key, unread: unread, cursor: r.cursor)
            })
        case .place(let p): return .place(p.channelID, p.hasServerID ? p.serverID : nil)
        case .interest(let i): return .interest(try i.value())
        case .channelEvent(let e): return .channelEvent(try e.value())
        case .replayed(let r): return .replayed(r.channelID, upTo: r.upTo)
        case .webhookAnswered(let w): return .webhookAnswered(token: w.token, status: Int(w.status), body: w.body)
        case nil: throw NodeWireError("a gateway step holds nothing")
        }
    }
}

extension GHNodeSessionCommand {
    init(_ c: SessionCommand) {
        self.init()
        switch c {
        case .send(let payload, let ord): send = .with { $0.payload = payload.data; $0.ord = ord }
        case .respond(let bytes): respond = Data(bytes)
        case .part(let id, let p): part = .with { $0.id = id; $0.response.result = p.result; $0.fromHolder = p.fromHolder }
        case .typing(let t): typing = t
        case .admitted(let user, let device, let sessionID):
            admitted = .with { $0.user = user; $0.device = device; $0.sessionID = sessionID }
        case .syncedFrom(let ord): syncedFrom = ord
        case .noteInboxItem(let ord): noteInboxItem = ord
        case .packageSent: packageSent = GHNodeNothing()
        case .finishSync: finishSync = GHNodeNothing()
        case .pause(let p): pause = UInt32(p.rawValue)
        case .resume(let p): resume = UInt32(p.rawValue)
        case .end(let reason, let message): end = .with { if let reason { $0.reason = reason }; $0.message = message }
        case .presence(let list): presence.presences = list
        }
    }

    func value() throws -> SessionCommand {
        switch command {
        case .send(let p): return .send(SharedBytes(p.payload), ord: p.ord)
        case .respond(let bytes): return .respond([UInt8](bytes))
        case .part(let p):
            guard let result = p.response.result else { throw NodeWireError("a gathered part holds no result") }
            return .part(p.id, GatherPart(result: result, fromHolder: p.fromHolder))
        case .typing(let t): return .typing(t)
        case .admitted(let a): return .admitted(user: a.user, device: a.device, sessionID: a.sessionID)
        case .syncedFrom(let ord): return .syncedFrom(ord)
        case .noteInboxItem(let ord): return .noteInboxItem(ord)
        case .packageSent: return .packageSent
        case .finishSync: return .finishSync
        case .pause(let p): return .pause(ReadPauses(rawValue: UInt8(truncatingIfNeeded: p)))
        case .resume(let p): return .resume(ReadPauses(rawValue: UInt8(truncatingIfNeeded: p)))
        case .end(let e): return .end(e.hasReason ? e.reason : nil, e.message)
        case .presence(let p): return .presence(p.presences)
        case nil: throw NodeWireError("a session command holds nothing")
        }
    }
}

extension GHNodePositionState {
    init(_ s: PositionState) {
        self.init()
        readSeq = s.position.readSeq
        ackTime = s.position.ackTime
        activity = s.position.activity
        mentions = s.mentions.map { m in .with { $0.seq = m.seq; $0.time = m.time } }
    }

    var value: PositionState {
        PositionState(position: ReadPosition(readSeq: readSeq, ackTime: ackTime, activity: activity),
                      mentions: mentions.map { MentionMark(seq: $0.seq, time: $0.time) })
    }
}

extension GHNodeInterest {
    init(_ u: InterestUpdate) {
        self.init()
        switch u {
        case .holds(let key, let user, let channel, let state):
            holds = .with { $0.key = key; $0.user = user; $0.channelID = channel; if let state { $0.state = GHNodePositionState(state) } }
        case .member(let key, let user, let server, let states):
            member = .with {
                $0.key = key; $0.user = user; $0.serverID = server
                if let states { $0.states = .with { $0.states = states.mapValues(GHNodePositionState.init) } }
            }
        case .position(let user, let channel, let server, let state):
            position = .with { $0.user = user; $0.channelID = channel; $0.serverID = server; $0.state = GHNodePositionState(state) }
        }
    }

    func value() throws -> InterestUpdate {
        switch update {
        case .holds(let h): return .holds(key: h.key, user: h.user, channel: h.channelID, state: h.hasState ? h.state.value : nil)
        case .member(let m):
            return .member(key: m.key, user: m.user, server: m.serverID, states: m.hasStates ? m.states.states.mapValues(\.value) : nil)
        case .position(let p): return .position(user: p.user, channel: p.channelID, server: p.serverID, p.state.value)
        case nil: throw NodeWireError("an interest update holds nothing")
        }
    }
}

extension GHNodeChannelEvent {
    init(_ e: ChannelEvent) {
        self.init()
        payload = e.payload.data
        channel = GHLogChannel(tip: e.channel)
        except = e.except
        toMembers = e.toMembers
        cursors = e.cursors
        hiddenFrom = e.hiddenFrom.sorted()
        seq = e.seq
        replayed = e.replayed
        files = e.files.map(GHLogAttachment.init)
        filesInUpdate = e.filesInUpdate
    }

    func value() throws -> ChannelEvent {
        ChannelEvent(payload: SharedBytes(payload), channel: channel.tip, except: except, toMembers: toMembers, cursors: cursors,
                     hiddenFrom: Set(hiddenFrom), seq: seq, replayed: replayed, files: files.map(\.value), filesInUpdate: filesInUpdate)
    }
}

extension GHLogChannel {
    /// What a channel event carries of its channel (the rest of a `Channel`
    /// stays empty: no reader of a channel event ever read it).
    init(tip: ChannelTip) {
        self.init()
        id = tip.id
        serverID = tip.serverID
        lastSeq = tip.lastSeq
        lastMessageTime = tip.lastMessageTime
        removedSeqs = tip.removed.seqs
    }

    var tip: ChannelTip {
        ChannelTip(id: id, serverID: serverID, lastSeq: lastSeq, lastMessageTime: lastMessageTime, removed: RemovedSeqs(removedSeqs))
    }
}
