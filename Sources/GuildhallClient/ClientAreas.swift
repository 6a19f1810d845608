// The SDK's calls grouped by area, as the protocol's requests are: `client.servers.create(…)`,
// `client.messages.send(…)`, `client.directs.open(with:)`. Each area is a
// small value naming the client it calls through; making one costs nothing,
// so `client.messages` may be taken anew for every call. The calls of each
// area live in its own file (Servers.swift, Messages.swift, …).

extension GuildhallClient {
    /// Servers: make, change and delete them; join, invite, leave; guests; the audit log; the directory.
    public struct Servers: Sendable { let client: GuildhallClient }
    /// A server's invite links.
    public struct Invites: Sendable { let client: GuildhallClient }
    /// A server's members: lists, roles given, nicknames, kicks, bans and timeouts.
    public struct Members: Sendable { let client: GuildhallClient }
    /// A server's channels.
    public struct Channels: Sendable { let client: GuildhallClient }
    /// A channel's incoming webhooks.
    public struct Webhooks: Sendable { let client: GuildhallClient }
    /// Channel messages: sending, history, changes to sent ones, reactions, threads, pins, search, read positions, typing.
    public struct Messages: Sendable { let client: GuildhallClient }
    /// Group read receipts.
    public struct Receipts: Sendable { let client: GuildhallClient }
    /// Direct and group conversations, their receipts, blocking and privacy.
    public struct Directs: Sendable { let client: GuildhallClient }
    /// Roles, permission overrides and effective permissions.
    public struct Roles: Sendable { let client: GuildhallClient }
    /// Subscriptions to servers' and channels' events.
    public struct Subscriptions: Sendable { let client: GuildhallClient }
    /// Profiles, presence and this device's push token.
    public struct People: Sendable { let client: GuildhallClient }
    /// Uploads.
    public struct Files: Sendable { let client: GuildhallClient }

    public var servers: Servers { Servers(client: self) }
    public var invites: Invites { Invites(client: self) }
    public var members: Members { Members(client: self) }
    public var channels: Channels { Channels(client: self) }
    public var webhooks: Webhooks { Webhooks(client: self) }
    public var messages: Messages { Messages(client: self) }
    public var receipts: Receipts { Receipts(client: self) }
    public var directs: Directs { Directs(client: self) }
    public var roles: Roles { Roles(client: self) }
    public var subscriptions: Subscriptions { Subscriptions(client: self) }
    public var people: People { People(client: self) }
    public var files: Files { Files(client: self) }
}
