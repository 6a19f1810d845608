// Incoming webhooks in the SDK (docs/features.md "Webhooks"): make, list and
// delete a channel's webhooks. Posting to one is plain HTTP, no SDK needed.

import GuildhallWire

extension GuildhallClient.Webhooks {
    /// Makes a webhook for `channel`; the answer is the only one with its secret and URL path.
    public func create(in channel: UInt64, name: String, reason: String = "") async throws -> GHWebhook {
        var r = GHCreateWebhook()
        r.channelID = channel; r.name = name; r.reason = reason
        return try await client.expect(.createWebhook(r)) { if case .webhook(let w) = $0 { w } else { nil } }
    }

    /// The channel's webhooks, oldest first, without their secrets.
    public func list(in channel: UInt64) async throws -> [GHWebhook] {
        var r = GHListWebhooks()
        r.channelID = channel
        return try await client.expect(.listWebhooks(r)) { if case .webhooks(let l) = $0 { l.webhooks } else { nil } }
    }

    public func delete(_ webhook: UInt64, in channel: UInt64, reason: String = "") async throws {
        var r = GHDeleteWebhook()
        r.channelID = channel; r.webhookID = webhook; r.reason = reason
        try await client.expectOK(.deleteWebhook(r))
    }
}
