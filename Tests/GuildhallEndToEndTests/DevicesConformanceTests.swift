// State across a user's devices (README "What clients receive"): read positions and
// received status set on one device reach the others at once when online and
// after sync when offline, and an unread query right after marking read sees
// the new count on every device.

import Foundation
import GuildhallClient
import GuildhallWire
import Testing

@Suite struct DevicesConformanceTests {
    @Test func readOnDeviceAReachesDeviceBWithoutPolling() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (phone, _) = try await server.client("bob", device: "phone")
        let (laptop, laptopEvents) = try await server.client("bob", device: "laptop")
        let (_, c) = try await guild(server, owner: alice, members: [phone])
        var last: GHChannelMessage?
        for i in 0..<3 { last = try await alice.messages.send("m\(i)", to: c.channelID) }
        _ = try await laptopEvents.message { $0.uid == last!.uid }
        #expect(laptopEvents.messageUnread.withLock { $0[last!.uid]?.unreadCount } == 3)
        _ = try await phone.messages.markRead(c.channelID)
        // Read-your-writes on the other device, at once.
        #expect(try await laptop.messages.unread([c.channelID]).first?.unreadCount == 0)
        let pushed = try await waitFor("laptop's unread event") { laptopEvents.unreads.last { $0.channelID == c.channelID && $0.unreadCount == 0 } }
        #expect(pushed.readSeq == last!.seq)
        try await phone.messages.setReceivedStatus([last!.uid], read: true, listened: true)
        let status = try await waitFor("laptop's received status") { laptopEvents.receivedStatuses.first { $0.messageUid == last!.uid } }
        #expect(status.isRead && status.isListened && !status.isDownloaded && !status.isRetrieved)
        #expect(try await laptop.messages.receivedStatus([last!.uid]).first?.isRead == true)
    }

    @Test func anOfflineDeviceGetsReadPositionsAndReceivedStatusInItsSync() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (phone, phoneEvents) = try await server.client("bob", device: "phone")
        let (_, c) = try await guild(server, owner: alice, members: [phone])
        // The tablet was in step once (joined notification synced and acknowledged), then went away.
        let (tablet, tabletEvents) = try await server.client("bob", device: "tablet")
        _ = try await waitFor("tablet synced") { tabletEvents.syncCompletions == 1 ? true : nil }
        tablet.close()
        let m = try await alice.messages.send("while the tablet sleeps", to: c.channelID)
        _ = try await phoneEvents.message { $0.uid == m.uid }
        _ = try await phone.messages.markRead(c.channelID)
        try await phone.messages.setReceivedStatus([m.uid], downloaded: true)
        let (_, later) = try await server.client("bob", device: "tablet")
        _ = try await waitFor("tablet synced again") { later.syncCompletions == 1 ? true : nil }
        let order = later.events.withLock { $0 }
        let completed = order.firstIndex { if case .syncCompleted = $0 { true } else { false } }!
        let read = order.firstIndex { if case .unread(let u) = $0 { u.channelID == c.channelID && u.unreadCount == 0 && u.readSeq == m.seq } else { false } }
        let status = order.firstIndex { if case .receivedStatus(let l) = $0 { l.contains { $0.messageUid == m.uid && $0.isDownloaded } } else { false } }
        #expect(read != nil && read! < completed, "the read position arrives in the sync")
        #expect(status != nil && status! < completed, "the received status arrives in the sync")
    }

    @Test func receivedStatusFlagsOnlyTurnOnAndAreCheckedAtTheDoor() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (bob, _) = try await server.client("bob")
        let m = try await bob.directs.send("note to self, in a way", to: "alice")
        try await bob.messages.setReceivedStatus([m.uid], read: true)
        try await bob.messages.setReceivedStatus([m.uid], retrieved: true)
        let s = try await bob.messages.receivedStatus([m.uid, 43])
        #expect(s.map(\.isRead) == [true, false])
        #expect(s.map(\.isRetrieved) == [true, false])
        await expectError(.badRequest) { _ = try await bob.messages.setReceivedStatus([m.uid]) }
        await expectError(.notFound) { _ = try await bob.messages.setReceivedStatus([43], read: true) }
        await expectError(.limitReached) { _ = try await bob.messages.setReceivedStatus(Array(1...101), read: true) }
    }

    /// Received status follows the devices, not only the client's
    /// word: reading a channel or a conversation, and a device's delivery,
    /// set the flags every device of the user sees.
    @Test func receivedStatusFollowsReadingAndDelivery() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, aliceEvents) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (tablet, _) = try await server.client("bob", device: "tablet")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        let m = try await alice.messages.send("news", to: c.channelID)
        // (Retrieved may already be true: the devices acknowledge what they received within a second.)
        #expect(try await tablet.messages.receivedStatus([m.uid]).map(\.isRead) == [false])
        _ = try await bob.messages.markRead(c.channelID)
        #expect(try await tablet.messages.receivedStatus([m.uid]).map { [$0.isRead, $0.isRetrieved] } == [[true, true]], "read on another device")
        // A message a device received and acknowledged is retrieved, not read (the SDK acknowledges within a second).
        let later = try await alice.messages.send("more news", to: c.channelID)
        try await waitUntil("bob's phone acknowledging it") { try await tablet.messages.receivedStatus([later.uid])[0].isRetrieved }
        #expect(try await tablet.messages.receivedStatus([later.uid])[0].isRead == false)

        let dm = try await alice.directs.send("hello bob", to: "bob")
        // The SDK says a direct message was delivered when it arrives (delivery receipts are on by default).
        _ = try await waitFor("the delivery receipt") {
            aliceEvents.events.withLock { $0.contains { if case .delivered(let uids, _, _) = $0 { uids.contains(dm.uid) } else { false } } } ? true : nil
        }
        #expect(try await tablet.messages.receivedStatus([dm.uid]).map { [$0.isRead, $0.isRetrieved] } == [[false, true]], "retrieved by a device")
        _ = try await bob.directs.sendReadReceipt(conversation: dm.channelID)
        #expect(try await tablet.messages.receivedStatus([dm.uid]).map { [$0.isRead, $0.isRetrieved] } == [[true, true]], "read by time")
        #expect(try await alice.messages.receivedStatus([dm.uid]).map(\.isRead) == [false], "the sender's own status is not the peer's")
    }

    /// What reading and delivery on one device set reaches the user's other
    /// devices at once, as ranges; never the device that did it.
    @Test func derivedReceivedStatusReachesTheOtherDevicesAtOnce() async throws {
        let server = try largeServer()
        defer { server.stop() }
        let (alice, _) = try await server.client("alice")
        let (phone, phoneEvents) = try await server.client("bob")
        // The tablet does not say deliveries itself: what it hears is the phone's doing.
        var options = ClientOptions(token: server.token("bob", device: "tablet"))
        options.deliveryReceipts = false
        let tablet = GuildhallClient(port: server.port, options: options)
        let tabletEvents = Recorder()
        tablet.addListener(tabletEvents)
        try await tablet.connect()
        defer { tablet.close() }
        let (g, c) = try await guild(server, owner: alice, members: [phone])
        try await phone.sub(.channelMsg, g.serverID, [c.channelID])
        let m = try await alice.messages.send("news", to: c.channelID)
        // The phone's SDK acknowledges what it received within a second.
        let retrieved = try await waitFor("the tablet hears the phone received it") {
            tabletEvents.receivedRanges.first { $0.channelID == c.channelID && !$0.isRead }
        }
        #expect(retrieved.seq == m.seq && retrieved.isRetrieved)
        _ = try await phone.messages.markRead(c.channelID)
        let read = try await waitFor("the tablet hears the phone read it") { tabletEvents.receivedRanges.first { $0.channelID == c.channelID && $0.isRead } }
        #expect(read.seq == m.seq && read.isRetrieved)

        let dm = try await alice.directs.send("hello bob", to: "bob")
        let delivered = try await waitFor("the tablet hears the phone got the direct message") {
            tabletEvents.receivedRanges.first { $0.channelID == dm.channelID && !$0.isRead }
        }
        #expect(delivered.seq == dm.seq && delivered.isRetrieved)
        _ = try await phone.directs.sendReadReceipt(conversation: dm.channelID, time: dm.sentTime)
        let byTime = try await waitFor("the tablet hears it read by time") { tabletEvents.receivedRanges.first { $0.channelID == dm.channelID && $0.isRead } }
        #expect(byTime.sentUntil == dm.sentTime && byTime.seq == 0)
        let single = try await alice.directs.send("one more", to: "bob")
        try await phone.directs.ackMessageRead(single.uid)
        let status = try await waitFor("the tablet hears the one message read") { tabletEvents.receivedStatuses.first { $0.messageUid == single.uid } }
        #expect(status.isRead && status.isRetrieved)
        #expect(phoneEvents.receivedRanges.isEmpty && phoneEvents.receivedStatuses.isEmpty, "the device that did it is not told")
    }
}
