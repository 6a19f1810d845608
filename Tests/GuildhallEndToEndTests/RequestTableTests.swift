// The request table (RequestTable.swift) against the request kinds that
// name ids (docs/reliability.md A4's list, RequestIDs): each row that needs
// a permission says where it is asked for, and where the request runs
// follows from the ids it names. Socket-free.

import GuildhallClient
import GuildhallWire
import Testing
@testable import GuildhallServer

@Suite struct RequestTableTests {
    let ids = RequestIDs(server: 11, channel: 22, message: 33, conversation: 44, directMessage: 55, group: 66)

    @Test func aRowThatNeedsAPermissionSaysWhereAndItsPlaceFollowsTheIds() {
        for (name, body) in ids.requests {
            let rule = body.rule
            #expect(rule.needs.isEmpty || rule.scope != nil, "\(name): a permission with no place to ask for it")
            #expect(rule.phase == .loggedIn, "\(name)")
            switch rule.scope {
            case .server(let id)?: #expect(id == ids.server && rule.target == .guild(ids.server), "\(name)")
            case .channel(let id)?: #expect(id == ids.channel && rule.target == .channel(ids.channel), "\(name)")
            case nil: break
            }
            // A group conversation's id is placed as a guild's.
            if case .guild(let id) = rule.target { #expect(id == ids.server || id == ids.group, "\(name): the guild it names") }
            if case .channel(let id) = rule.target { #expect(id == ids.channel, "\(name): the channel it names") }
        }
    }

    @Test func onlyASessionsUpkeepStaysOnItsGatewayAndOnlyLoginOpensOne() {
        let upkeep: [GHRequest.OneOf_Body] = [.heartbeat(GHHeartbeat()), .ack(GHAck()), .logout(GHLogout())]
        #expect(upkeep.allSatisfy { $0.rule.target == .gateway && $0.rule.rate == .session })
        #expect([GHRequest.OneOf_Body.login(GHLogin()), .resume(GHResume())].allSatisfy { $0.rule.phase == .opensSession && $0.rule.target == .user })
        #expect(ids.requests.allSatisfy { $0.1.rule.target != .gateway })
        // What the gateway answers has no handler at a home; everything else has one.
        #expect((upkeep + [.login(GHLogin()), .resume(GHResume())]).allSatisfy { $0.rule.handle == nil })
        for (name, body) in ids.requests { #expect(body.rule.handle != nil, "\(name) has no handler") }
    }

    /// The rows of requests every home answers in part say how the parts merge.
    @Test func gatheredRequestsMergeAsTheirRowsSay() {
        for (name, body) in ids.requests where body.rule.target == .everyHome {
            switch (body, body.rule.merge) {
            case (.getMessages(let r), .messages(let order)): #expect(order == r.uids, "\(name)")
            case (.listMyServers, .servers(nil)), (.getServers, .servers(_?)), (.getReceiptInfo, .receipts),
                 (.setSubscribeMode, .ok), (.markDelivered, .ok), (.listConversations, .conversations),
                 (.getSentStatus, .sentStatuses), (.getReceivedStatus, .receivedStatuses): break
            case (_, .firstFound): break
            default: Issue.record("\(name): merges as \(body.rule.merge)")
            }
        }
    }
}
