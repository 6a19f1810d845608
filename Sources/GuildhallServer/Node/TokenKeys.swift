// Login tokens as standard JWTs (docs/security.md), verified with vapor's
// jwt-kit: HS256, ES256 and EdDSA keys, each with its key id (`kid`), several
// at once, so that a deployment rotates keys without logging anyone out. The
// keys are a JWKS (RFC 7517: "oct" for HS256, "EC" P-256 for ES256, "OKP"
// Ed25519 for EdDSA) given inline (`token-keys`) or in a file
// (`token-keys-file`), read again on SIGHUP. Claims: `sub` is the user, `exp`
// is required, `device` is optional. The v1 token (AccessToken) is accepted
// beside them. Any thread: jwt-kit's key collection is an actor, so a
// verification is awaited off the loop (TokenChecks.swift).

import Crypto
import Foundation
import GuildhallCore
import JWTKit
import Synchronization

final class TokenKeys: Sendable {
    /// What a JWT carries: `sub`, `exp` (both required) and the device.
    struct LoginClaims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var device: String?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    /// The keys in use: jwt-kit's collection (filled by a task: its methods are
    /// the actor's, and no thread may block waiting for one), and each key
    /// id's algorithm (a token's header must name it).
    private struct Keys: Sendable {
        let collection: Task<JWTKeyCollection, Never>
        let algorithms: [String: String]
    }

    /// One key of the JWKS, checked and ready to add.
    private enum Key: Sendable {
        case hs256(SymmetricKey)
        case es256(ES256PublicKey)
        case edDSA(EdDSA.PublicKey)
    }

    private let keys = Mutex<Keys?>(nil)
    /// Where the key collection's work runs: a queue of its own, not Swift's
    /// cooperative threads, which code sharing the process may block (the
    /// tests do: a login must not wait for a thread they hold).
    static let executor = TokenExecutor()
    /// The device a token without a `device` claim logs in as.
    static let defaultDevice = "default"

    /// Reads and checks the keys `settings` names, then puts them in use;
    /// throws, keeping the keys in use, when they cannot be read. Never waits on the collection.
    func load(_ settings: Settings) throws(SettingsError) {
        var json = settings.tokenKeys
        if !settings.tokenKeysFile.isEmpty {
            guard json.isEmpty else { throw SettingsError(description: "set token-keys or token-keys-file, not both") }
            guard let bytes = FileManager.default.contents(atPath: settings.tokenKeysFile) else {
                throw SettingsError(description: "token-keys-file: cannot read \(settings.tokenKeysFile)")
            }
            json = String(decoding: bytes, as: UTF8.self)
        }
        guard !json.isEmpty else { return keys.withLock { $0 = nil } }
        let parsed = try Self.keys(fromJWKS: json)
        let collection = Task(executorPreference: Self.executor) {
            let c = JWTKeyCollection()
            for (kid, key) in parsed {
                let id = JWKIdentifier(string: kid)
                switch key {
                case .hs256(let secret): await c.add(hmac: HMACKey(key: secret), digestAlgorithm: .sha256, kid: id)
                case .es256(let k): await c.add(ecdsa: k, kid: id)
                case .edDSA(let k): await c.add(eddsa: k, kid: id)
                }
            }
            return c
        }
        let algorithms = parsed.mapValues { key -> String in
            switch key {
            case .hs256: "HS256"
            case .es256: "ES256"
            case .edDSA: "EdDSA"
            }
        }
        keys.withLock { $0 = Keys(collection: collection, algorithms: algorithms) }
    }

    private static func keys(fromJWKS json: String) throws(SettingsError) -> [String: Key] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
              let list = object["keys"] as? [[String: Any]], !list.isEmpty else {
            throw SettingsError(description: "token keys must be a JWKS: {\"keys\": [{\"kid\": …, \"kty\": …}, …]}")
        }
        var keys: [String: Key] = [:]
        for entry in list {
            guard let kid = entry["kid"] as? String, !kid.isEmpty else { throw SettingsError(description: "token keys: every key needs a kid") }
            guard keys[kid] == nil else { throw SettingsError(description: "token keys: kid \(kid) appears twice") }
            let field = { (name: String) in entry[name] as? String ?? "" }
            switch (field("kty"), field("alg"), field("crv")) {
            case ("oct", "HS256", _):
                guard let secret = Base64URL.decode(field("k")), secret.count >= 32 else {
                    throw SettingsError(description: "token keys: \(kid): an HS256 key's k is base64url of at least 32 bytes")
                }
                keys[kid] = .hs256(SymmetricKey(data: secret))
            case ("EC", "ES256", "P-256"):
                guard let key = try? ES256PublicKey(parameters: ECDSAParameters(x: field("x"), y: field("y"))) else {
                    throw SettingsError(description: "token keys: \(kid): x and y are not a P-256 public key")
                }
                keys[kid] = .es256(key)
            case ("OKP", "EdDSA", "Ed25519"):
                guard let key = try? EdDSA.PublicKey(x: field("x"), curve: .ed25519) else {
                    throw SettingsError(description: "token keys: \(kid): x is not an Ed25519 public key")
                }
                keys[kid] = .edDSA(key)
            default:
                throw SettingsError(description: "token keys: \(kid): kty, alg and crv must be oct and HS256, EC, ES256 and P-256, or OKP, EdDSA and Ed25519")
            }
        }
        return keys
    }

    /// Whether `text` is a JWT rather than a v1 token: three base64url parts.
    static func isJWT(_ text: String) -> Bool {
        !text.hasPrefix("v1.") && text.split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    /// The user a JWT names (`sub`), before anything is checked: what its failed logins are counted against.
    static func claimedUser(_ text: String) -> UserID? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let bytes = Base64URL.decode(String(parts[1])),
              let claims = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else { return nil }
        return claims["sub"] as? String
    }

    /// The identity a JWT proves, or why not (every failure 401, its message naming the cause).
    func verify(_ text: String, nowSeconds: UInt64) async -> Result<AccessToken, Failure> {
        guard let keys = keys.withLock({ $0 }) else {
            return .failure(Failure(.unauthenticated, "malformed token: this server accepts v1 tokens only (no token keys are set)"))
        }
        // The header names its key and algorithm; both must be one of ours, so no key is tried under another's algorithm.
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let headerBytes = Base64URL.decode(String(parts[0])),
              let header = try? JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any],
              let alg = header["alg"] as? String else {
            return .failure(Failure(.unauthenticated, "malformed token: a JWT header with alg (and kid) is expected"))
        }
        let kid = header["kid"] as? String ?? (keys.algorithms.count == 1 ? keys.algorithms.keys.first! : "")
        guard let expected = keys.algorithms[kid] else {
            return .failure(Failure(.unauthenticated, kid.isEmpty ? "malformed token: kid is required (several keys are in use)"
                                                                 : "invalid token signature: unknown key id \(kid)"))
        }
        guard alg == expected else { return .failure(Failure(.unauthenticated, "invalid token signature: key \(kid) signs \(expected), not \(alg)")) }
        let claims: LoginClaims
        do {
            claims = try await keys.collection.value.verify(text, as: LoginClaims.self)
        } catch let error as JWTError where error.errorType == .signatureVerificationFailed {
            return .failure(Failure(.unauthenticated, "invalid token signature"))
        } catch {
            return .failure(Failure(.unauthenticated, "malformed token: \(error)"))
        }
        let expiry = UInt64(max(0, claims.exp.value.timeIntervalSince1970))
        guard expiry > nowSeconds else {
            return .failure(Failure(.unauthenticated, "token expired at \(expiry) (now \(nowSeconds)); mint a new one"))
        }
        let user = claims.sub.value, device = claims.device ?? Self.defaultDevice
        if let problem = Validation.userIDProblem(user) ?? Validation.userIDProblem(device) {
            return .failure(Failure(.unauthenticated, "token identity rejected: \(problem)"))
        }
        return .success(AccessToken(user: user, device: device, expiry: expiry))
    }
}

/// Runs tasks that prefer it on a serial dispatch queue of its own.
final class TokenExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "guildhall-tokens")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job), executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
