// What one user may see of the Directory, for the reads that answer a
// request: a server of which the user is no member and a channel the user
// may not view are answered exactly as ones that do not exist (404), never
// as forbidden. A value made per read (`directory.seen(by:)`); it changes
// nothing. Loop thread only, as the Directory.

public struct DirectorySeenBy {
    let directory: Directory
    let user: UserID

    /// The server, if the user is a member; 404 otherwise.
    public func server(_ id: ServerID) throws(Failure) -> ServerRecord {
        guard let s = directory.servers[id], s.members[user] != nil else { throw Directory.serverNotFound(id) }
        return s.record
    }

    public func members(of server: ServerID) throws(Failure) -> [MemberRecord] {
        _ = try self.server(server)
        return directory.servers[server]!.members.values.sorted { $0.userID < $1.userID }
    }

    /// The channels of a server the user may view.
    public func channels(of server: ServerID) throws(Failure) -> [ChannelRecord] {
        _ = try self.server(server)
        return directory.servers[server]!.channels.compactMap { directory.channel($0) }.filter { directory.canView(user, $0) }.sorted { $0.id < $1.id }
    }

    /// The channel, if the user is a member of its server who may view it; 404 otherwise.
    public func channel(_ id: ChannelID) throws(Failure) -> ChannelRecord {
        guard let c = directory.channel(id), directory.canView(user, c) else { throw Directory.channelNotFound(id) }
        return c
    }

    /// The server's roles, highest first.
    public func roles(of server: ServerID) throws(Failure) -> [RoleRecord] {
        _ = try self.server(server)
        return directory.servers[server]!.permissions.roles.values.sorted { ($0.position, $0.id) > ($1.position, $1.id) }
    }

    /// The server's overrides: the server-wide ones and those of channels the user may view.
    public func overrides(of server: ServerID) throws(Failure) -> [OverrideRecord] {
        _ = try self.server(server)
        return directory.servers[server]!.permissions.overrides.filter {
            $0.channelID == 0 || directory.channel($0.channelID).map { directory.canView(user, $0) } == true
        }
    }
}
