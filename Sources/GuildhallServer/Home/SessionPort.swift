// What a home asks of a session's gateway side (docs/architecture.md): the home decides
// what a session receives and when it ends; the gateway numbers, keeps for
// resume, frames and writes. A session on the home's own loop is its own
// port (direct calls, below); one on another loop is reached through a
// `RemoteSession`, which turns each call into a command for that loop's
// gateway, in order. Commands for a session that has already ended are
// dropped on the gateway's side. Loop thread only.

import GuildhallCore
import GuildhallLoop
import GuildhallWire

protocol SessionPort: AnyObject {
    /// A live event: numbered, kept for resume and written, or held during sync (see `Session.push`).
    func push(event payload: SharedBytes, unread: FrameEncoding.RecipientUnread?, cursor: UInt64)
    /// An event that goes out now, even during sync: offline items (with their inbox `ord`) and markers.
    func send(_ payload: SharedBytes, ord: UInt64)
    /// An answer, encoded (a Frame payload).
    func respond(encoded payload: [UInt8])
    /// The answer to send `id`: its stored message, encoded (`MessageWire.answer` frames it).
    func respond(answering id: UInt64, message: [UInt8])
    /// This home's part of the answer to a request every home answers (`HomeRoutes` merges them).
    func answerPart(_ id: UInt64, _ part: GatherPart)
    /// The home admitted the login: the session is `user`'s on `device`, and offline sync begins.
    func admitted(user: UserID, device: DeviceID, sessionID: String)
    /// The device's stored cursor: items up to it were synced before.
    func syncedFrom(_ cursor: UInt64)
    /// An inbox item the session needs no event for; acknowledging later events covers it.
    func noteInboxItem(_ ord: UInt64)
    /// The events sent so far end an offline package: tell the home when the client acknowledges them.
    func packageSent()
    /// Offline sync is done: held live events go out, in order.
    func finishSync()
    /// The home asks the gateway not to read the session (storage, outbound bytes), or no longer.
    func homePauses(_ reason: ReadPauses)
    func homeResumes(_ reason: ReadPauses)
    /// A channel's typer list changed (the recipient's user left out); the gateway composes the frames.
    func typing(_ entry: GHChannelTypers)
    /// Users' presence changed (or is told at first); the gateway coalesces the frames.
    func presence(_ list: [GHPresence])
    /// The home ended the session: tell the peer why (when there is a reason) and close.
    func end(_ reason: GHCloseReason?, _ message: String)
}

extension SessionPort {
    func respond(answering id: UInt64, message: [UInt8]) { respond(encoded: MessageWire.answer(id: id, message: message)) }
}
