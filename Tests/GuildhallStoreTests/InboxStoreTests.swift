// The offline-sync tables on a temporary database: packages read in ord
// order up to a horizon, device cursors only move forward, received-status
// flags only turn on, and retention prunes old items.

import Foundation
import Testing
@testable import GuildhallCore
@testable import GuildhallStore

@Suite struct InboxStoreTests {
    @Test func packagesComeInOrdOrderUpToTheHorizonFromTheDevicesCursor() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        defer { store.close() }
        var writes: [StoreWrite] = [.message(message(seq: 1, uid: 77))]
        for ord in 1...10 as ClosedRange<UInt64> {
            writes.append(.inbox(InboxRow(ord: ord, user: ord % 2 == 0 ? "bob" : "carol", at: 100, messageUID: ord == 2 ? 77 : 0,
                                          event: ord == 2 ? [] : [UInt8(ord)])))
        }
        writes.append(.syncCursor("bob", "phone", 4))
        writes.append(.syncCursor("bob", "phone", 2))  // never backwards
        store.writer.submit(WriteJob(ticket: 1, writes: writes))
        _ = reports.waitOutcomes(1)

        store.reader.submit(ticket: 2, .inbox(user: "bob", device: "phone", after: nil, upTo: 8, limit: 1))
        let first = try #require(reports.waitRead(ticket: 2))
        #expect(first.cursor == 4)
        #expect(first.inbox.map(\.ord) == [6])
        #expect(first.hasMore)
        store.reader.submit(ticket: 3, .inbox(user: "bob", device: "phone", after: 6, upTo: 8, limit: 5))
        let second = try #require(reports.waitRead(ticket: 3))
        #expect(second.inbox.map(\.ord) == [8])
        #expect(!second.hasMore)
        // A fresh device starts from the beginning; a message row comes back with its message.
        store.reader.submit(ticket: 4, .inbox(user: "bob", device: "tablet", after: nil, upTo: 10, limit: 10))
        let fresh = try #require(reports.waitRead(ticket: 4))
        #expect(fresh.cursor == 0)
        #expect(fresh.inbox.map(\.ord) == [2, 4, 6, 8, 10])
        #expect(fresh.inbox[0].message?.uid == 77)
        #expect(fresh.inbox[1].event == [4])
    }

    @Test func receivedFlagsOnlyTurnOnAndOldItemsArePruned() throws {
        let folder = temporaryFolder()
        let reports = Reports()
        let store = try openStore(folder, reports)
        store.writer.submit(WriteJob(ticket: 1, writes: [
            .receivedStatus("bob", 5, .read), .receivedStatus("bob", 5, .downloaded),
            .inbox(InboxRow(ord: 1, user: "bob", at: 100, event: [1])), .inbox(InboxRow(ord: 2, user: "bob", at: 300, event: [2])),
            .pruneInbox(before: 200),
        ]))
        _ = reports.waitOutcomes(1)
        store.reader.submit(ticket: 2, .receivedStatus(user: "bob", uids: [5, 6]))
        #expect(try #require(reports.waitRead(ticket: 2)).statuses == [[.read, .downloaded], []])
        store.reader.submit(ticket: 3, .inbox(user: "bob", device: "d", after: nil, upTo: 10, limit: 10))
        #expect(try #require(reports.waitRead(ticket: 3)).inbox.map(\.ord) == [2])
        store.close()
        let reopened = try openStore(folder, Reports())
        defer { reopened.close() }
        #expect(try reopened.loadSnapshot(clientIDFloorUID: 0).highestInboxOrd == 2)
    }
}
