// Incoming webhooks (docs/features.md "Webhooks"): a channel's secret URLs
// that post messages into it. A webhook's secret is shown once, when it is
// made; only its SHA-256 is kept, so a copy of the store opens none. A post
// is a small JSON object, read here into what it asks for. Pure.

import Crypto
import Foundation

public struct WebhookRecord: Sendable, Codable, Equatable {
    public var id: UInt64
    public var serverID: ServerID
    public var channelID: ChannelID
    public var name: String
    /// SHA-256 of its secret, in hex.
    public var secretHash: String
    public var createdBy: UserID
    public var createdAt: UInt64

    public init(id: UInt64, serverID: ServerID, channelID: ChannelID, name: String, secretHash: String, createdBy: UserID, createdAt: UInt64) {
        self.id = id; self.serverID = serverID; self.channelID = channelID; self.name = name; self.secretHash = secretHash
        self.createdBy = createdBy; self.createdAt = createdAt
    }

    /// A new secret: 32 random bytes in URL-safe hex.
    public static func newSecret() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &g)) }.joined()
    }

    public static func hash(_ secret: String) -> String { SHA256.hash(data: Data(secret.utf8)).map { String(format: "%02x", $0) }.joined() }

    /// Whether `secret` is this webhook's (compared in constant time).
    public func opens(with secret: String) -> Bool {
        let a = Array(Self.hash(secret).utf8), b = Array(secretHash.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The path of its URL on the web listener.
    public static func path(channel: ChannelID, webhook: UInt64, secret: String) -> String { "/webhooks/\(channel)/\(webhook)/\(secret)" }
}

/// Who a webhook's message shows as: the webhook, under the name (and avatar) the post gave, else its own name.
public struct WebhookAuthor: Sendable, Codable, Equatable, Hashable {
    public var webhookID: UInt64
    public var name: String
    public var avatar: String

    public init(webhookID: UInt64, name: String, avatar: String = "") { self.webhookID = webhookID; self.name = name; self.avatar = avatar }

    /// The sender id its messages carry. A token could name a user so too:
    /// a message's `webhook` author, never its sender id, says a webhook posted it.
    public var senderID: UserID { "webhook:\(webhookID)" }
}

/// What a POST to a webhook's URL asks for.
public struct WebhookPost: Sendable, Equatable {
    public var content: String
    public var username: String?
    public var avatar: String?

    /// The largest body read.
    public static let maxBodyBytes = 64 * 1024

    /// Reads `{content, username?, avatar?}`; the problem, for a 400, when it is not that.
    public static func read(_ body: [UInt8], maxContentBytes: Int) -> Result<WebhookPost, WebhookPostProblem> {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            return .failure(WebhookPostProblem(400, "the body must be a JSON object: {\"content\": \"...\", \"username\": \"...\", \"avatar\": \"...\"}"))
        }
        guard let content = object["content"] as? String, !content.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            return .failure(WebhookPostProblem(400, "content must be a string that is not empty"))
        }
        if content.utf8.count > maxContentBytes { return .failure(WebhookPostProblem(413, "content is \(content.utf8.count) bytes; at most \(maxContentBytes)")) }
        var post = WebhookPost(content: content)
        for (key, value) in object where key != "content" {
            guard key == "username" || key == "avatar" else { return .failure(WebhookPostProblem(400, "\(key) is not a field of a webhook post")) }
            guard let text = value as? String else { return .failure(WebhookPostProblem(400, "\(key) must be a string")) }
            let problem = key == "username" ? UserProfile.nameProblem(text, field: "username") : UserProfile.avatarProblem(text)
            if let problem { return .failure(WebhookPostProblem(400, problem)) }
            if key == "username" { post.username = text } else { post.avatar = text }
        }
        return .success(post)
    }

    public init(content: String, username: String? = nil, avatar: String? = nil) { self.content = content; self.username = username; self.avatar = avatar }
}

public struct WebhookPostProblem: Error, Sendable, Equatable {
    public let status: Int
    public let message: String
    public init(_ status: Int, _ message: String) { self.status = status; self.message = message }
}

/// A server's webhooks, by id and by channel.
public struct WebhookBook: Sendable {
    public private(set) var byID: [UInt64: WebhookRecord] = [:]

    public init() {}

    public func webhooks(in channel: ChannelID) -> [WebhookRecord] { byID.values.filter { $0.channelID == channel }.sorted { $0.id < $1.id } }

    public mutating func save(_ w: WebhookRecord) { byID[w.id] = w }

    public mutating func remove(_ id: UInt64) { byID[id] = nil }

    /// Forgets those `drop` picks (their channel or server went, or their shard moved away).
    public mutating func forget(where drop: (WebhookRecord) -> Bool) { byID = byID.filter { !drop($0.value) } }
}
