// Login tokens: mint and verify. Pure computation over a shared secret.
//
// Format: "v1.<b64url user>.<b64url device>.<expiry unix seconds>.<b64url mac>"
// where mac = HMAC-SHA256(secret, "v1\n<user>\n<device>\n<expiry>").
// An operator's backend mints the same tokens with the same secret. Each
// part has one spelling: base64url without padding, the expiry in decimal
// without sign or leading zeros; any other spelling is refused, so a token
// cannot be altered into a second valid one.

import Crypto
import Foundation

/// The identity a valid token proves.
public struct AccessToken: Sendable, Codable, Equatable {
    public let user: UserID
    public let device: DeviceID
    /// Unix seconds after which the token is refused.
    public let expiry: UInt64

    public init(user: UserID, device: DeviceID, expiry: UInt64) {
        self.user = user
        self.device = device
        self.expiry = expiry
    }

    /// The signed string for this identity.
    public func signed(with secret: [UInt8]) -> String {
        let mac = Self.mac(user: user, device: device, expiry: expiry, secret: secret)
        return ["v1", Base64URL.encode(Array(user.utf8)), Base64URL.encode(Array(device.utf8)), String(expiry), Base64URL.encode(mac)]
            .joined(separator: ".")
    }

    /// Checks signature, shape and expiry; the failure says which one broke.
    public static func verify(_ token: String, secret: [UInt8], nowSeconds: UInt64) throws(Failure) -> AccessToken {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[0] == "v1",
              let userBytes = Base64URL.decode(String(parts[1])),
              let deviceBytes = Base64URL.decode(String(parts[2])),
              let expiry = UInt64(parts[3]),
              let mac = Base64URL.decode(String(parts[4])),
              let user = String(validating: userBytes, as: UTF8.self),
              let device = String(validating: deviceBytes, as: UTF8.self)
        else { throw Failure(.unauthenticated, "malformed token: expected v1.<user>.<device>.<expiry>.<mac>") }
        guard parts[1] == Base64URL.encode(userBytes), parts[2] == Base64URL.encode(deviceBytes), parts[3] == String(expiry),
              parts[4] == Base64URL.encode(mac) else {
            throw Failure(.unauthenticated, "malformed token: base64url without padding and a plain decimal expiry, as minted")
        }
        let expected = Self.mac(user: user, device: device, expiry: expiry, secret: secret)
        guard constantTimeEqual(expected, mac) else {
            throw Failure(.unauthenticated, "invalid token signature")
        }
        guard expiry > nowSeconds else {
            throw Failure(.unauthenticated, "token expired at \(expiry) (now \(nowSeconds)); mint a new one")
        }
        if let problem = Validation.userIDProblem(user) ?? Validation.userIDProblem(device) {
            throw Failure(.unauthenticated, "token identity rejected: \(problem)")
        }
        return AccessToken(user: user, device: device, expiry: expiry)
    }

    /// The user a token names, before anything is checked: what failed logins are counted against.
    public static func claimedUser(_ token: String) -> UserID? {
        let parts = token.split(separator: ".", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])) else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func mac(user: String, device: String, expiry: UInt64, secret: [UInt8]) -> [UInt8] {
        let key = SymmetricKey(data: secret)
        let text = "v1\n\(user)\n\(device)\n\(expiry)"
        return Array(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: key))
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}

/// Base64 with the URL alphabet and no padding (RFC 4648 §5).
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    public static func decode(_ text: String) -> [UInt8]? {
        var s = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map(Array.init)
    }
}
