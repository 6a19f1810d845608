// Tokens verify only with the right secret, before expiry, untampered.

import Testing
@testable import GuildhallCore

@Suite struct AccessTokenTests {
    let secret = Array("test-secret".utf8)

    @Test func aSignedTokenVerifiesToItsIdentity() throws {
        let token = AccessToken(user: "alice", device: "phone", expiry: 2_000).signed(with: secret)
        let verified = try AccessToken.verify(token, secret: secret, nowSeconds: 1_000)
        #expect(verified == AccessToken(user: "alice", device: "phone", expiry: 2_000))
    }

    @Test func anExpiredTokenIsRefusedWithA401() {
        let token = AccessToken(user: "alice", device: "phone", expiry: 2_000).signed(with: secret)
        #expect(throws: Failure.self) { try AccessToken.verify(token, secret: secret, nowSeconds: 2_000) }
        do { _ = try AccessToken.verify(token, secret: secret, nowSeconds: 3_000) } catch {
            #expect(error.code == .unauthenticated)
            #expect(error.message.contains("expired"))
        }
    }

    @Test func aTokenSignedWithAnotherSecretIsRefused() {
        let token = AccessToken(user: "alice", device: "phone", expiry: 2_000).signed(with: Array("other".utf8))
        do {
            _ = try AccessToken.verify(token, secret: secret, nowSeconds: 1_000)
            Issue.record("accepted a forged token")
        } catch {
            #expect(error.message == "invalid token signature")
        }
    }

    @Test func changingTheUserInvalidatesTheSignature() {
        let token = AccessToken(user: "alice", device: "phone", expiry: 2_000).signed(with: secret)
        var parts = token.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(Array("mallory".utf8))
        #expect(throws: Failure.self) { try AccessToken.verify(parts.joined(separator: "."), secret: secret, nowSeconds: 1_000) }
    }

    @Test(arguments: ["", "garbage", "v1.a.b.c", "v2.YQ.Yg.10.AA", "v1.!!.Yg.10.AA"])
    func malformedTokensAreRefused(_ token: String) {
        do {
            _ = try AccessToken.verify(token, secret: secret, nowSeconds: 1)
            Issue.record("accepted \(token)")
        } catch {
            #expect(error.code == .unauthenticated)
        }
    }

    @Test func userIDsWithUnicodeAndPunctuationRoundTrip() throws {
        let token = AccessToken(user: "émile.o'neil@example.com", device: "d-1", expiry: 10).signed(with: secret)
        #expect(try AccessToken.verify(token, secret: secret, nowSeconds: 1).user == "émile.o'neil@example.com")
    }

    /// One spelling per token: a sign or leading zero in the expiry, padding
    /// or non-canonical base64 are refused even when the MAC matches.
    @Test func onlyTheCanonicalSpellingOfATokenVerifies() throws {
        let token = AccessToken(user: "alice", device: "phone", expiry: 2_000).signed(with: secret)
        let parts = token.split(separator: ".").map(String.init)
        #expect(try AccessToken.verify(token, secret: secret, nowSeconds: 1_000).user == "alice")
        var variants: [[String]] = []
        for expiry in ["+2000", "02000", " 2000"] { variants.append([parts[0], parts[1], parts[2], expiry, parts[4]]) }
        variants.append([parts[0], parts[1], parts[2], parts[3], parts[4] + "="])
        variants.append([parts[0], parts[1] + "=", parts[2], parts[3], parts[4]])
        for v in variants {
            #expect(throws: Failure.self, "\(v)") { try AccessToken.verify(v.joined(separator: "."), secret: secret, nowSeconds: 1_000) }
        }
        #expect(AccessToken.claimedUser(token) == "alice")
    }
}
