// Channels in the SDK (`client.channels`): make, change, delete and list a
// server's channels.

import GuildhallWire

extension GuildhallClient.Channels {
    private func channel(_ body: GHRequest.OneOf_Body) async throws -> GHChannelInfo {
        try await client.expect(body) { if case .channel(let c) = $0 { c } else { nil } }
    }

    public func create(in server: UInt64, name: String, topic: String = "", custom: String = "",
                       guestVisibility: GHGuestVisibility = .followServer) async throws -> GHChannelInfo {
        var r = GHCreateChannel()
        r.serverID = server; r.name = name; r.topic = topic; r.custom = custom; r.guestVisibility = guestVisibility
        return try await channel(.createChannel(r))
    }

    public func update(_ id: UInt64, name: String? = nil, topic: String? = nil, custom: String? = nil,
                       guestVisibility: GHGuestVisibility? = nil, slowModeSeconds: UInt32? = nil) async throws -> GHChannelInfo {
        var r = GHUpdateChannel()
        r.channelID = id
        if let slowModeSeconds { r.slowModeSeconds = slowModeSeconds }
        if let guestVisibility { r.guestVisibility = guestVisibility }
        if let name { r.name = name }
        if let topic { r.topic = topic }
        if let custom { r.custom = custom }
        return try await channel(.updateChannel(r))
    }

    public func delete(_ id: UInt64) async throws {
        var r = GHDeleteChannel()
        r.channelID = id
        try await client.expectOK(.deleteChannel(r))
    }

    public func list(of server: UInt64) async throws -> [GHChannelInfo] {
        var r = GHListChannels()
        r.serverID = server
        return try await client.expect(.listChannels(r)) { if case .channels(let l) = $0 { l.channels } else { nil } }
    }
}
