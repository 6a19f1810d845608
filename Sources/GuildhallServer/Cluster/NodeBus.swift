// The other nodes of a cluster, as a loop reaches them (docs/cluster.md): one
// NATS connection per node, a subscription on `gh.<cluster>.node.<id>`.
// A loop posts a message for a loop of another node (its place, Place.swift)
// and goes on: the publish is buffered by cnats and sent by its own thread.
// Messages for this node arrive on cnats' threads; the handler decodes each
// and posts it to its loop's inbox, the one way into a loop. The sender's
// loop becomes a place of the sending node, so answers find their way back.

import CNATS
import Foundation
import GuildhallLoop
import GuildhallWire
import Synchronization

final class NodeBus: Sendable {
    private let link: ClusterConnection
    private let me: Int
    private let prefix: String
    private let inboxes: [LoopInbox<LoopMessage>]
    private let subscription = Mutex<SubscriptionHandle?>(nil)
    private let log: ServerLog

    init(settings: Settings, inboxes: [LoopInbox<LoopMessage>], log: ServerLog) throws {
        link = try ClusterConnection(settings: settings, role: "bus")
        me = settings.nodeID
        prefix = "gh.\(settings.clusterName).node."
        self.inboxes = inboxes
        self.log = log
        var sub: OpaquePointer?
        let s = natsConnection_Subscribe(&sub, link.connection, prefix + String(me), { _, _, msg, closure in
            guard let msg, let closure else { return }
            Unmanaged<NodeBus>.fromOpaque(closure).takeUnretainedValue().received(msg)
        }, Unmanaged.passUnretained(self).toOpaque())
        guard s == NATS_OK else {
            link.close()
            throw SettingsError(description: "cannot subscribe to \(prefix)\(me): \(ClusterConnection.text(s))")
        }
        let handle = SubscriptionHandle(sub)
        subscription.withLock { $0 = handle }
        _ = natsConnection_Flush(link.connection)
    }

    /// Unsubscribes and closes (after the loops stopped posting).
    func close() {
        if let handle = subscription.withLock({ s in defer { s = nil }; return s }) {
            _ = natsSubscription_Unsubscribe(handle.pointer)
            natsSubscription_Destroy(handle.pointer)
        }
        link.close()
    }

    /// Sends `message` to the loop at `place` of another node.
    func post(_ message: LoopMessage, to place: Int) {
        guard let node = Place.node(of: place), let envelope = NodeWire.envelope(message, toLoop: Place.loop(of: place), fromNode: me) else { return }
        do {
            let bytes: [UInt8] = try envelope.serializedBytes()
            _ = bytes.withUnsafeBytes { natsConnection_Publish(link.connection, prefix + String(node), $0.baseAddress, Int32($0.count)) }
        } catch {
            log.error("a message for another node could not be encoded", ["node": node, "error": String(describing: error)])
        }
    }

    /// On a cnats thread: decode, and post to the loop it names.
    private func received(_ msg: OpaquePointer) {
        defer { natsMsg_Destroy(msg) }
        let length = Int(natsMsg_GetDataLength(msg))
        // Read in place: the message outlives the decode (destroyed on return).
        let bytes = natsMsg_GetData(msg).map { Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: $0), count: length, deallocator: .none) } ?? Data()
        do {
            let e = try GHNodeEnvelope(serializedBytes: bytes)
            guard Int(e.toLoop) < inboxes.count else { return }
            _ = inboxes[Int(e.toLoop)].post(try NodeWire.loopMessage(e))
        } catch {
            log.error("a message from another node could not be decoded", ["error": String(describing: error)])
        }
    }
}

/// A cnats subscription pointer (cnats subscriptions are thread-safe).
final class SubscriptionHandle: @unchecked Sendable {
    let pointer: OpaquePointer?
    init(_ pointer: OpaquePointer?) { self.pointer = pointer }
}
