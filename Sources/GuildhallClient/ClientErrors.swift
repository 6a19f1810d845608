// What a call can throw: the server's answer (`GuildhallError`, with the
// wire's code and message) or a connection problem (`ClientError`).

import GuildhallWire

/// An error answered by the server.
public struct GuildhallError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: GHErrorCode
    public let message: String
    /// With `.rateLimited`: milliseconds until the request would be accepted.
    public var retryAfterMs: UInt32 = 0

    public init(code: GHErrorCode, message: String) {
        self.code = code
        self.message = message
    }

    init(_ e: GHError) {
        self.init(code: e.code, message: e.message)
        retryAfterMs = e.retryAfterMs
    }

    public var description: String { "\(code.rawValue) \(message)" }
}

/// A connection problem on the client's side.
public enum ClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// There is no logged-in connection right now; the client may be reconnecting.
    case notConnected
    /// The connection dropped before the answer came.
    case disconnected(String)
    /// The server closed the session with a reason.
    case sessionClosed(GHCloseReason, String)
    /// No answer within the request timeout.
    case timeout
    /// `close()` was called.
    case closed

    public var description: String {
        switch self {
        case .notConnected: "not connected"
        case .disconnected(let why): "disconnected: \(why)"
        case .sessionClosed(let reason, let message): "session closed (\(reason)): \(message)"
        case .timeout: "request timed out"
        case .closed: "client closed"
        }
    }
}
