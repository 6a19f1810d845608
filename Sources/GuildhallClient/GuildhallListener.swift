// The callbacks an application implements to hear from the server. Called
// on the client's connection thread, in the order events arrived; keep them
// short and hand work elsewhere. Every method has an empty default.

import GuildhallWire

public enum ConnectionStatus: Sendable, Equatable {
    case connecting
    case connected(GHLoginResult)
    case disconnected(ClientError)
    /// The client will not reconnect (closed, replaced, or login refused).
    case closed
}

public protocol GuildhallListener: AnyObject, Sendable {
    /// A new message in a channel this session receives.
    func onMessage(_ message: GHChannelMessage)
    /// A change to a server, channel or membership.
    func onSystemNotification(_ notification: GHSystemNotification)
    /// The server closed the session and said why.
    func onSessionClosed(_ reason: GHCloseReason, message: String)
    /// Connection state changes, including reconnects.
    func onConnectionStatus(_ status: ConnectionStatus)
}

extension GuildhallListener {
    public func onMessage(_ message: GHChannelMessage) {}
    public func onSystemNotification(_ notification: GHSystemNotification) {}
    public func onSessionClosed(_ reason: GHCloseReason, message: String) {}
    public func onConnectionStatus(_ status: ConnectionStatus) {}
}
