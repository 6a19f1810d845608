// Resends of a message with a client id (docs/features.md "De-duplication"):
// a resend within the window is answered with the original, read back from
// the store, or waits for the original's commit. Channel and direct sends
// share the table (`RecentSends`, in HomeServices). Loop thread only.

import GuildhallCore
import GuildhallWire

extension HomeServices {
    /// A resend with a client id seen within the de-duplication window:
    /// answers it with the original, read from the store (or waits for the
    /// original's commit), and returns true. When the stored message is not
    /// this sender's with this client id (the compact table's hash collided),
    /// runs `otherwise`: the send is new.
    func answeredAsResend(_ clientID: String, id: UInt64, from s: HomeSession, as shape: @escaping (MessageRecord) -> GHChannelMessage,
                          otherwise: @escaping () -> Void) -> Bool {
        guard !clientID.isEmpty, let original = recentSends.lookup(sender: s.user, clientID: clientID) else { return false }
        switch original {
        case .inFlight:
            recentSends.wait(sender: s.user, clientID: clientID, session: s, id: id)
        case .committed(let uid):
            runner.read(.messages(uids: [uid])) { result in
                if let m = result.messages.first, m.sender == s.user, m.clientID == clientID {
                    s.respond(id, .message(shape(m)))
                } else if result.error != nil {
                    s.fail(id, Failure(.unavailable, "storage is unavailable; retry later"))
                } else {
                    otherwise()
                }
            }
        }
        return true
    }

    /// Settles a send's commit for the resends that waited on it: returns
    /// them when it committed; when it failed answers them as the runner
    /// answers the sender (503) and returns none.
    func resendsSettled(_ record: MessageRecord, ok: Bool) -> [(HomeSession, UInt64)] {
        let waiters = record.clientID.isEmpty ? [] : recentSends.settle(record, committed: ok)
        guard ok else {
            for (w, wid) in waiters { w.fail(wid, Failure(.unavailable, Home.sendFailure)) }
            return []
        }
        return waiters
    }
}
