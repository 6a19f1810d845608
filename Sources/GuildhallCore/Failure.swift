// The domain's one error type: a code with HTTP meaning and a message a
// developer can act on. The server maps it one to one onto the wire's Error.

/// Failure codes, numbered as in docs/protocol.md and Proto/ `ErrorCode`.
public enum FailureCode: Int, Sendable, Equatable {
    case badRequest = 400
    case unauthenticated = 401
    case forbidden = 403
    case notFound = 404
    case conflict = 409
    case tooLarge = 413
    case limitReached = 414
    case rateLimited = 429
    case `internal` = 500
    case unavailable = 503
}

/// A failed operation. `message` is shown to the client, so it never holds
/// SQL, paths or stack text.
public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: FailureCode
    public let message: String
    /// With `.rateLimited`: when the same request would be accepted.
    public var retryAfterMs: UInt32 = 0

    public init(_ code: FailureCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public static func rateLimited(_ m: String, retryAfterMs: UInt32) -> Failure {
        var f = Failure(.rateLimited, m)
        f.retryAfterMs = retryAfterMs
        return f
    }

    public var description: String { "\(code.rawValue) \(message)" }

    public static func badRequest(_ m: String) -> Failure { Failure(.badRequest, m) }
    public static func forbidden(_ m: String) -> Failure { Failure(.forbidden, m) }
    public static func notFound(_ m: String) -> Failure { Failure(.notFound, m) }
    public static func conflict(_ m: String) -> Failure { Failure(.conflict, m) }
}
