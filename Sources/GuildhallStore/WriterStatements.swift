// The writer's prepared statements and how each StoreWrite becomes SQL.
// Writer thread only; called with a transaction open.

import GuildhallCore

final class WriterStatements {
    let begin, commit, rollback: Statement
    private let insertMessage, saveServer, deleteServer, deleteServerMembers, deleteServerInvites, deleteServerChannels: Statement
    private let saveMember, removeMember, saveInvite, removeInvite, saveChannel, deleteChannel: Statement

    init(_ db: SQLiteConnection) throws(StoreError) {
        begin = try db.prepare("BEGIN IMMEDIATE")
        commit = try db.prepare("COMMIT")
        rollback = try db.prepare("ROLLBACK")
        insertMessage = try db.prepare(MessageRows.insertSQL)
        saveServer = try db.prepare("INSERT OR REPLACE INTO servers(id, name, icon, custom, owner, open_join, created_at) VALUES(?,?,?,?,?,?,?)")
        deleteServer = try db.prepare("DELETE FROM servers WHERE id = ?")
        deleteServerMembers = try db.prepare("DELETE FROM members WHERE server_id = ?")
        deleteServerInvites = try db.prepare("DELETE FROM invites WHERE server_id = ?")
        deleteServerChannels = try db.prepare("DELETE FROM channels WHERE server_id = ?")
        saveMember = try db.prepare("INSERT OR REPLACE INTO members(server_id, user_id, role, joined_at) VALUES(?,?,?,?)")
        removeMember = try db.prepare("DELETE FROM members WHERE server_id = ? AND user_id = ?")
        saveInvite = try db.prepare("INSERT OR REPLACE INTO invites(server_id, user_id, inviter, created_at) VALUES(?,?,?,?)")
        removeInvite = try db.prepare("DELETE FROM invites WHERE server_id = ? AND user_id = ?")
        saveChannel = try db.prepare("INSERT OR REPLACE INTO channels(id, server_id, name, topic, custom, created_at) VALUES(?,?,?,?,?,?)")
        deleteChannel = try db.prepare("DELETE FROM channels WHERE id = ?")
    }

    func apply(_ writes: [StoreWrite]) throws(StoreError) {
        for write in writes { try apply(write) }
    }

    private func apply(_ write: StoreWrite) throws(StoreError) {
        switch write {
        case .message(let m):
            MessageRows.bind(m, to: insertMessage.reset())
            try insertMessage.run()
        case .directory(let change):
            try apply(change)
        }
    }

    private func apply(_ change: DirectoryChange) throws(StoreError) {
        switch change {
        case .serverSaved(let r):
            let s = saveServer.reset()
            s.bind(1, r.id); s.bind(2, r.name); s.bind(3, r.icon); s.bind(4, r.custom)
            s.bind(5, r.owner); s.bind(6, r.openJoin); s.bind(7, r.createdAt)
            try s.run()
        case .serverDeleted(let id):
            for s in [deleteServer, deleteServerMembers, deleteServerInvites, deleteServerChannels] {
                s.reset().bind(1, id)
                try s.run()
            }
        case .memberSaved(let m):
            let s = saveMember.reset()
            s.bind(1, m.serverID); s.bind(2, m.userID); s.bind(3, Int64(m.role.rawValue)); s.bind(4, m.joinedAt)
            try s.run()
        case .memberRemoved(let server, let user):
            let s = removeMember.reset()
            s.bind(1, server); s.bind(2, user)
            try s.run()
        case .inviteSaved(let i):
            let s = saveInvite.reset()
            s.bind(1, i.serverID); s.bind(2, i.userID); s.bind(3, i.inviter); s.bind(4, i.createdAt)
            try s.run()
        case .inviteRemoved(let server, let user):
            let s = removeInvite.reset()
            s.bind(1, server); s.bind(2, user)
            try s.run()
        case .channelSaved(let c):
            let s = saveChannel.reset()
            s.bind(1, c.id); s.bind(2, c.serverID); s.bind(3, c.name); s.bind(4, c.topic); s.bind(5, c.custom); s.bind(6, c.createdAt)
            try s.run()
        case .channelDeleted(let id):
            deleteChannel.reset().bind(1, id)
            try deleteChannel.run()
        }
    }
}
