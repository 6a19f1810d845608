// Logins with standard JWTs (docs/security.md): HS256, ES256 and EdDSA keys
// with key ids, several at once, rotated without logging anyone out, beside
// the v1 token; and every bad token refused with 401 and AUTH_FAILED. Tokens
// are minted here with jwt-kit, as an app's backend would with any JWT library.

import Crypto
import Foundation
import GuildhallClient
import GuildhallCore
import GuildhallWire
import JWTKit
import Testing
@testable import GuildhallServer

/// Keys of each kind, their JWKS (public halves) and a minting collection (private halves).
struct TestTokenKeys {
    let hmacSecret = (0..<32).map { _ in UInt8.random(in: 0...255) }
    let ec = P256.Signing.PrivateKey()
    let ed = Curve25519.Signing.PrivateKey()

    func jwk(_ kid: String) -> [String: String] {
        switch kid.first {
        case "h": ["kty": "oct", "kid": kid, "alg": "HS256", "k": Base64URL.encode(hmacSecret)]
        case "e":
            ["kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256",
             "x": Base64URL.encode(Array(ec.publicKey.rawRepresentation.prefix(32))), "y": Base64URL.encode(Array(ec.publicKey.rawRepresentation.suffix(32)))]
        default: ["kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "x": Base64URL.encode(Array(ed.publicKey.rawRepresentation))]
        }
    }

    func jwks(_ kids: String...) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: ["keys": kids.map(jwk)]), as: UTF8.self)
    }

    /// A token signed by the key `kid` ("h…" HS256, "e…" ES256, "d…" EdDSA).
    func token(_ kid: String, user: String = "alice", device: String? = "phone", expiresIn: TimeInterval = 3600) async throws -> String {
        let keys = JWTKeyCollection()
        switch kid.first {
        case "h": await keys.add(hmac: HMACKey(key: SymmetricKey(data: hmacSecret)), digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
        case "e": await keys.add(ecdsa: try ES256PrivateKey(backing: ec), kid: JWKIdentifier(string: kid))
        default: await keys.add(eddsa: EdDSA.PrivateKey(backing: ed), kid: JWKIdentifier(string: kid))
        }
        let claims = TokenKeys.LoginClaims(sub: SubjectClaim(value: user), exp: ExpirationClaim(value: Date(timeIntervalSinceNow: expiresIn)),
                                           device: device)
        return try await keys.sign(claims, kid: JWKIdentifier(string: kid))
    }

    /// A token put together by hand: any header and claims, signed with the HS256 secret (or not at all).
    func handMade(header: [String: Any], claims: [String: Any], signed: Bool = true) throws -> String {
        let head = Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: header)))
        let body = Base64URL.encode(Array(try JSONSerialization.data(withJSONObject: claims)))
        let mac = HMAC<SHA256>.authenticationCode(for: Array("\(head).\(body)".utf8), using: SymmetricKey(data: hmacSecret))
        return "\(head).\(body).\(signed ? Base64URL.encode(Array(mac)) : "")"
    }
}

@Suite struct JWTLoginTests {
    /// The answer to a login with `token` on a raw connection: the login result, or the error and close reason.
    func login(_ server: TestServer, _ token: String) throws -> (GHLoginResult?, GHError?, [GHCloseReason]) {
        let raw = try RawConnection(port: server.port)
        raw.login(token)
        // The answer comes first: a login result (the session stays), or an error and the close.
        guard let answer = raw.nextFrame(timeout: 5) else { return (nil, nil, []) }
        if case .login(let l)? = answer.response.result { return (l, nil, []) }
        let rest = raw.framesUntilClosed(timeout: 5)
        return (nil, ([answer] + rest).errors.first, rest.closeReasons)
    }

    @Test func eachKindOfKeyLogsInBesideTheV1Token() async throws {
        let keys = TestTokenKeys()
        let server = try TestServer { $0.tokenKeys = keys.jwks("h1", "e1", "d1") }
        defer { server.stop() }
        for kid in ["h1", "e1", "d1"] {
            let client = GuildhallClient(port: server.port, token: try await keys.token(kid, user: "user-\(kid)"))
            let login = try await client.connect()
            #expect(login.userID == "user-\(kid)" && login.deviceID == "phone", "\(kid)")
            _ = try await client.servers.create(name: "signed by \(kid)")
            client.close()
        }
        // Without a device claim the device is "default"; the v1 token still works.
        let noDevice = GuildhallClient(port: server.port, token: try await keys.token("d1", user: "bob", device: nil))
        #expect(try await noDevice.connect().deviceID == TokenKeys.defaultDevice)
        noDevice.close()
        let (alice, _) = try await server.client("alice")
        #expect(try await alice.connect().userID == "alice")
    }

    @Test func badTokensAreRefusedWith401AndClosed() async throws {
        let keys = TestTokenKeys()
        let server = try TestServer { $0.tokenKeys = keys.jwks("h1", "e1") }
        defer { server.stop() }
        let now = Int(Date().timeIntervalSince1970)
        let cases: [(String, String, String)] = [
            ("expired", try await keys.token("h1", expiresIn: -10), "expired"),
            ("another key's signature", try await TestTokenKeys().token("e1"), "signature"),
            ("an unknown key id", try await keys.token("h9"), "unknown key id"),
            ("no signature", try keys.handMade(header: ["alg": "HS256", "kid": "h1"], claims: ["sub": "alice", "exp": now + 60], signed: false), "signature"),
            ("alg none", try keys.handMade(header: ["alg": "none", "kid": "h1"], claims: ["sub": "alice", "exp": now + 60], signed: false), "signature"),
            ("an HS256 token under an ES256 key's id", try keys.handMade(header: ["alg": "HS256", "kid": "e1"], claims: ["sub": "alice", "exp": now + 60]), "signature"),
            ("no kid while two keys are in use", try keys.handMade(header: ["alg": "HS256"], claims: ["sub": "alice", "exp": now + 60]), "kid is required"),
            ("no exp", try keys.handMade(header: ["alg": "HS256", "kid": "h1"], claims: ["sub": "alice"]), "malformed"),
            ("a user id the server refuses", try keys.handMade(header: ["alg": "HS256", "kid": "h1"], claims: ["sub": "", "exp": now + 60]), "identity"),
            ("a header that is not JSON", "bm90IGpzb24.e30.c2ln", "malformed"),
        ]
        for (what, token, says) in cases {
            let (result, error, closes) = try login(server, token)
            #expect(result == nil && error?.code == .unauthenticated && closes == [.authFailed], "\(what)")
            #expect(error?.message.contains(says) == true, "\(what): \(error?.message ?? "no error")")
        }
    }

    /// A server without token keys refuses any JWT as malformed, and says why.
    @Test func withoutKeysAJWTIsRefused() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let (_, error, closes) = try login(server, try await TestTokenKeys().token("h1"))
        #expect(error?.code == .unauthenticated && error?.message.contains("no token keys") == true && closes == [.authFailed])
    }

    /// Keys rotate through the keys file: the new key works once added, the
    /// old one stops once removed, and nobody logged in with it is logged out.
    @Test func keysRotateWithoutLoggingAnyoneOut() async throws {
        let keys = TestTokenKeys()
        let file = NSTemporaryDirectory() + "guildhall-keys-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try keys.jwks("h1").write(toFile: file, atomically: true, encoding: .utf8)
        let server = try TestServer { $0.tokenKeysFile = file }
        defer { server.stop() }
        let early = GuildhallClient(port: server.port, token: try await keys.token("h1"))
        #expect(try await early.connect().userID == "alice")
        #expect(try login(server, try await keys.token("e2", user: "probe")).1?.code == .unauthenticated, "not yet a key")

        try keys.jwks("h1", "e2").write(toFile: file, atomically: true, encoding: .utf8)
        server.update { _ in }  // as SIGHUP: the file is read again
        try await waitUntil("the new key accepted") { try login(server, try await keys.token("e2", user: "probe")).0 != nil }
        #expect(try login(server, try await keys.token("h1", user: "probe")).0 != nil, "both keys at once")

        try keys.jwks("e2").write(toFile: file, atomically: true, encoding: .utf8)
        server.update { _ in }
        try await waitUntil("the old key refused") { try login(server, try await keys.token("h1", user: "probe")).1?.message.contains("unknown key id") == true }
        _ = try await early.servers.create(name: "still here")
        early.close()

        // A keys file that no longer reads keeps the keys in use.
        try "not a JWKS".write(toFile: file, atomically: true, encoding: .utf8)
        server.update { _ in }  // returns once every loop applied it: the file was read, and refused
        #expect(try login(server, try await keys.token("e2", user: "probe")).0 != nil)
    }

    /// A keys file that does not read stops the start, with the reason.
    @Test func badKeysStopTheStart() throws {
        #expect(throws: SettingsError.self) { _ = try TestServer { $0.tokenKeys = "{}" } }
        #expect(throws: SettingsError.self) { _ = try TestServer { $0.tokenKeys = #"{"keys": [{"kty": "oct", "alg": "HS256", "k": "c2hvcnQ"}]}"# } }
        #expect(throws: SettingsError.self) { _ = try TestServer { $0.tokenKeys = #"{"keys": [{"kty": "oct", "kid": "a", "alg": "HS256", "k": "c2hvcnQ"}]}"# } }
        #expect(throws: SettingsError.self) { _ = try TestServer { $0.tokenKeys = #"{"keys": [{"kty": "RSA", "kid": "a", "alg": "RS256"}]}"# } }
        #expect(throws: SettingsError.self) { _ = try TestServer { $0.tokenKeysFile = "/nonexistent/keys.json" } }
    }
}
