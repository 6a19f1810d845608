// The writer's prepared statements and how each StoreWrite becomes SQL.
// Writer thread only; called with a transaction open.
//
// Plain messages (no reply, thread, files, webhook; most sends) wait and go
// in multi-row inserts: one statement's step, reset and halt for up to 16
// rows instead of one each took about a quarter of SQLite's time per row
// (measured against the same schema from C: 4.3–5.1 → 3.1–3.5 µs a row at
// 16 rows a commit). They go before any other write that may touch a
// message's row, so an edit or a thread's count in the same transaction
// finds its row, and before COMMIT (`beforeCommit`); a transaction that
// fails forgets them (`ended`).

import GuildhallCore

final class WriterStatements {
    let begin, commit, rollback: Statement
    var connection: SQLiteConnection { begin.connection }
    private let saveServer, deleteServer, deleteServerMembers, deleteServerInvites, deleteServerChannels: Statement
    private let saveMember, removeMember, saveInvite, removeInvite, saveChannel, deleteChannel: Statement
    private let saveBan, removeBan, deleteServerBans, savePosition, deleteChannelPositions: Statement
    private let insertInbox, saveCursor, saveReceived, pruneInbox, savePresence, savePin, removePin, deleteChannelPins: Statement
    private let saveReceiptRequest, insertAdvance, deleteChannelRequests, deleteChannelAdvances: Statement
    private let saveConversation, saveDirectSide, saveDirectRead: Statement
    private let saveGroup, clearGroupMembers, addGroupMember, dropLeaversSides, dropLeaversReads: Statement
    private let saveRole, deleteRole, deleteRoleOverrides, saveOverride, removeOverride, deleteServerRoles, deleteServerOverrides: Statement
    private let saveCode, removeCode, deleteServerCodes, deleteChannelCodes: Statement
    private let saveTimeout, removeTimeout, deleteServerTimeouts: Statement
    private let deleteChannelOverrides, deleteMemberOverrides: Statement
    private let saveReceivedSeq, saveLogPosition: Statement
    private let insertFull, attachFile, removeMessageFiles, editMessage, removeMessage, countThreadReply, addReaction, removeReaction, removeReactions: Statement
    /// The plain inserts, by `MessageRows.rowsPerInsert` (16 rows a statement down to one).
    private let plainInserts: [(rows: Int, statement: Statement)]
    /// Plain messages of this transaction not yet inserted, where they lie
    /// in their jobs' writes: a copy of each record retained every field, and freeing it released them again.
    private var waitingMessages: [(writes: [StoreWrite], index: Int)] = []
    /// Where the message inserts' texts and bytes are bound in place.
    private let arena = BindArena()
    /// Queues a message for the search index (SearchIndex.swift); nil while search is off.
    private let queueForSearch: Statement?
    private let pruneSearchQueue: Statement?
    /// The index's thread, woken after a transaction that queued messages.
    let indexer: SearchIndexer?
    /// Whether the transaction under way queued any; transactions since the queue was last pruned.
    private var queued = false, sincePruned = 0
    private let saveFile, deleteFile: Statement
    private let audit: AuditWrites
    private let saveProfile, savePushToken, removePushToken, saveBlock, removeBlock, savePrivacy, removePrivacy: Statement
    private let saveWebhook, deleteWebhook, deleteServerWebhooks, deleteChannelWebhooks: Statement

    init(_ db: SQLiteConnection, indexer: SearchIndexer?) throws(StoreError) {
        begin = try db.prepare("BEGIN IMMEDIATE")
        commit = try db.prepare("COMMIT")
        rollback = try db.prepare("ROLLBACK")
        var plainInserts: [(rows: Int, statement: Statement)] = []
        for rows in MessageRows.rowsPerInsert { plainInserts.append((rows, try db.prepare(MessageRows.insertSQL(rows: rows)))) }
        self.plainInserts = plainInserts
        self.indexer = indexer
        queueForSearch = indexer == nil ? nil : try db.prepare("INSERT INTO search_queue(uid) VALUES(?)")
        pruneSearchQueue = indexer == nil ? nil : try db.prepare("DELETE FROM search_queue WHERE seq <= ?")
        audit = try AuditWrites(db)
        saveFile = try db.prepare("INSERT OR IGNORE INTO files(id, uploader, server_id, channel_id, filename, content_type, size, sha256, created_at) "
                                  + "VALUES(?,?,?,?,?,?,?,?,?)")
        insertFull = try db.prepare(MessageRows.insertFullSQL)
        deleteFile = try db.prepare("DELETE FROM files WHERE id = ?")
        attachFile = try db.prepare("UPDATE files SET message_uid = ? WHERE id = ?")
        removeMessageFiles = try db.prepare("UPDATE files SET removed = 1 WHERE message_uid = ?")
        saveReceivedSeq = try db.prepare("INSERT INTO received_seqs(user_id, channel_id, seq) VALUES(?,?,?) "
                                         + "ON CONFLICT(user_id, channel_id) DO UPDATE SET seq = MAX(seq, excluded.seq)")
        editMessage = try db.prepare("UPDATE messages SET kind = ?, text = ?, custom_type = ?, payload = ?, edited_time = ?, "
                                     + "edit_count = edit_count + 1 WHERE uid = ?")
        removeMessage = try db.prepare("UPDATE messages SET text = '', custom_type = '', payload = NULL, mentions = '', mention_all = 0, "
                                       + "attachments = '', "
                                       + "removed = ?, removed_by = ?, removed_time = ? WHERE uid = ?")
        countThreadReply = try db.prepare("UPDATE messages SET thread_replies = thread_replies + 1, thread_last = MAX(thread_last, ?) WHERE uid = ?")
        addReaction = try db.prepare("INSERT OR IGNORE INTO reactions(message_uid, user_id, type, time) VALUES(?,?,?,?)")
        removeReaction = try db.prepare("DELETE FROM reactions WHERE message_uid = ? AND user_id = ? AND type = ?")
        removeReactions = try db.prepare("DELETE FROM reactions WHERE message_uid = ?")
        saveServer = try db.prepare("INSERT OR REPLACE INTO servers(id, name, icon, custom, owner, open_join, created_at, allow_guests, discoverable) "
                                    + "VALUES(?,?,?,?,?,?,?,?,?)")
        deleteServer = try db.prepare("DELETE FROM servers WHERE id = ?")
        deleteServerMembers = try db.prepare("DELETE FROM members WHERE server_id = ?")
        deleteServerInvites = try db.prepare("DELETE FROM invites WHERE server_id = ?")
        saveCode = try db.prepare("INSERT OR REPLACE INTO invite_codes(code, server_id, channel_id, creator, created_at, expires_at, max_uses, uses) "
                                  + "VALUES(?,?,?,?,?,?,?,?)")
        removeCode = try db.prepare("DELETE FROM invite_codes WHERE code = ?")
        deleteServerCodes = try db.prepare("DELETE FROM invite_codes WHERE server_id = ?")
        deleteChannelCodes = try db.prepare("DELETE FROM invite_codes WHERE channel_id = ?")
        saveTimeout = try db.prepare("INSERT OR REPLACE INTO timeouts(server_id, user_id, until, actor) VALUES(?,?,?,?)")
        removeTimeout = try db.prepare("DELETE FROM timeouts WHERE server_id = ? AND user_id = ?")
        deleteServerTimeouts = try db.prepare("DELETE FROM timeouts WHERE server_id = ?")
        deleteServerChannels = try db.prepare("DELETE FROM channels WHERE server_id = ?")
        saveMember = try db.prepare("INSERT OR REPLACE INTO members(server_id, user_id, role, joined_at, roles, nickname, display_name, avatar) "
                                    + "VALUES(?,?,?,?,?,?,?,?)")
        saveBlock = try db.prepare("INSERT OR IGNORE INTO direct_blocks(blocker, blocked) VALUES(?,?)")
        removeBlock = try db.prepare("DELETE FROM direct_blocks WHERE blocker = ? AND blocked = ?")
        savePrivacy = try db.prepare("INSERT OR IGNORE INTO direct_privacy(user_id) VALUES(?)")
        removePrivacy = try db.prepare("DELETE FROM direct_privacy WHERE user_id = ?")
        saveWebhook = try db.prepare("INSERT OR REPLACE INTO webhooks(id, server_id, channel_id, name, secret_hash, created_by, created_at) VALUES(?,?,?,?,?,?,?)")
        deleteWebhook = try db.prepare("DELETE FROM webhooks WHERE id = ?")
        deleteServerWebhooks = try db.prepare("DELETE FROM webhooks WHERE server_id = ?")
        deleteChannelWebhooks = try db.prepare("DELETE FROM webhooks WHERE channel_id = ?")
        savePushToken = try db.prepare("INSERT OR REPLACE INTO push_tokens(user_id, device_id, platform, token, previews, updated_at) VALUES(?,?,?,?,?,?)")
        removePushToken = try db.prepare("DELETE FROM push_tokens WHERE user_id = ? AND device_id = ?")
        saveProfile = try db.prepare("INSERT OR REPLACE INTO profiles(user_id, display_name, avatar, updated_at) VALUES(?,?,?,?)")
        removeMember = try db.prepare("DELETE FROM members WHERE server_id = ? AND user_id = ?")
        saveInvite = try db.prepare("INSERT OR REPLACE INTO invites(server_id, user_id, inviter, created_at) VALUES(?,?,?,?)")
        removeInvite = try db.prepare("DELETE FROM invites WHERE server_id = ? AND user_id = ?")
        saveChannel = try db.prepare("INSERT OR REPLACE INTO channels(id, server_id, name, topic, custom, created_at, guest_visibility, slow_mode) "
                                     + "VALUES(?,?,?,?,?,?,?,?)")
        deleteChannel = try db.prepare("DELETE FROM channels WHERE id = ?")
        saveBan = try db.prepare("INSERT OR REPLACE INTO bans(server_id, user_id, actor, created_at, expires_at) VALUES(?,?,?,?,?)")
        removeBan = try db.prepare("DELETE FROM bans WHERE server_id = ? AND user_id = ?")
        deleteServerBans = try db.prepare("DELETE FROM bans WHERE server_id = ?")
        // A read position never goes back: of two marks decided together, the one committed last may be the lower.
        savePosition = try db.prepare("""
            INSERT INTO read_positions(user_id, channel_id, read_seq, ack_time, activity) VALUES(?,?,?,?,?)
            ON CONFLICT(user_id, channel_id) DO UPDATE SET
                ack_time = CASE WHEN excluded.read_seq > read_seq THEN excluded.ack_time ELSE ack_time END,
                read_seq = max(read_seq, excluded.read_seq), activity = max(activity, excluded.activity)
            """)
        deleteChannelPositions = try db.prepare("DELETE FROM read_positions WHERE channel_id = ?")
        insertInbox = try db.prepare("INSERT INTO inbox(ord, user_id, at, message_uid, event) VALUES(?,?,?,?,?)")
        saveCursor = try db.prepare("INSERT INTO sync_cursors(user_id, device_id, ord) VALUES(?,?,?) "
                                    + "ON CONFLICT(user_id, device_id) DO UPDATE SET ord = MAX(ord, excluded.ord)")
        saveReceived = try db.prepare("INSERT INTO received_status(user_id, message_uid, flags) VALUES(?,?,?) "
                                      + "ON CONFLICT(user_id, message_uid) DO UPDATE SET flags = flags | excluded.flags")
        pruneInbox = try db.prepare("DELETE FROM inbox WHERE at < ?")
        savePin = try db.prepare("INSERT OR REPLACE INTO pins(channel_id, message_uid, pinned_by, pinned_at) VALUES(?,?,?,?)")
        removePin = try db.prepare("DELETE FROM pins WHERE channel_id = ? AND message_uid = ?")
        deleteChannelPins = try db.prepare("DELETE FROM pins WHERE channel_id = ?")
        savePresence = try db.prepare("INSERT OR REPLACE INTO presence(user_id, status, text, last_seen) VALUES(?,?,?,?)")
        saveReceiptRequest = try db.prepare("INSERT OR IGNORE INTO receipt_requests(message_uid, channel_id, seq, requester, sent_time) VALUES(?,?,?,?,?)")
        insertAdvance = try db.prepare("INSERT INTO receipt_advances(channel_id, user_id, from_seq, to_seq, time) VALUES(?,?,?,?,?)")
        deleteChannelRequests = try db.prepare("DELETE FROM receipt_requests WHERE channel_id = ?")
        deleteChannelAdvances = try db.prepare("DELETE FROM receipt_advances WHERE channel_id = ?")
        saveConversation = try db.prepare("INSERT OR IGNORE INTO conversations(id, user_a, user_b, created_at) VALUES(?,?,?,?)")
        saveDirectSide = try db.prepare("INSERT OR REPLACE INTO direct_sides(conversation_id, user_id, delivered_seq, read_time, read_count) VALUES(?,?,?,?,?)")
        saveRole = try db.prepare("INSERT OR REPLACE INTO roles(server_id, role_id, name, position, allow, deny, created_at) VALUES(?,?,?,?,?,?,?)")
        deleteRole = try db.prepare("DELETE FROM roles WHERE server_id = ? AND role_id = ?")
        deleteRoleOverrides = try db.prepare("DELETE FROM overrides WHERE server_id = ? AND role_id = ?")
        saveOverride = try db.prepare("INSERT OR REPLACE INTO overrides(server_id, channel_id, role_id, user_id, allow, deny) VALUES(?,?,?,?,?,?)")
        removeOverride = try db.prepare("DELETE FROM overrides WHERE server_id = ? AND channel_id = ? AND role_id = ? AND user_id = ?")
        deleteServerRoles = try db.prepare("DELETE FROM roles WHERE server_id = ?")
        deleteServerOverrides = try db.prepare("DELETE FROM overrides WHERE server_id = ?")
        deleteChannelOverrides = try db.prepare("DELETE FROM overrides WHERE channel_id = ?")
        deleteMemberOverrides = try db.prepare("DELETE FROM overrides WHERE server_id = ? AND user_id = ?")
        saveLogPosition = try db.prepare("INSERT INTO log_positions(shard, seq) VALUES(?,?) ON CONFLICT(shard) DO UPDATE SET seq = MAX(seq, excluded.seq)")
        saveDirectRead = try db.prepare("INSERT OR IGNORE INTO direct_reads(message_uid, conversation_id, reader, sent_time) VALUES(?,?,?,?)")
        saveGroup = try db.prepare("INSERT OR REPLACE INTO conversations(id, user_a, user_b, created_at, name, owner, kind) VALUES(?,'','',?,?,?,?)")
        clearGroupMembers = try db.prepare("DELETE FROM group_members WHERE conversation_id = ?")
        addGroupMember = try db.prepare("INSERT INTO group_members(conversation_id, user_id) VALUES(?,?)")
        let leavers = "conversation_id = ?1 AND %@ NOT IN (SELECT user_id FROM group_members WHERE conversation_id = ?1)"
        dropLeaversSides = try db.prepare("DELETE FROM direct_sides WHERE " + leavers.replacingOccurrences(of: "%@", with: "user_id"))
        dropLeaversReads = try db.prepare("DELETE FROM direct_reads WHERE " + leavers.replacingOccurrences(of: "%@", with: "reader"))
    }

    func apply(_ writes: [StoreWrite]) throws(StoreError) {
        // By index: each write is handed on borrowed, not copied out of the array (a copy retains every field of a message).
        for i in writes.indices {
            if case .message(let m) = writes[i], !MessageRows.needsFullInsert(m) {
                waitingMessages.append((writes, i))
                if waitingMessages.count == MessageRows.rowsPerInsert[0] { try insertWaiting() }
            } else {
                if !waitingMessages.isEmpty, Self.touchesMessages(writes[i]) { try insertWaiting() }
                try apply(writes[i])
            }
        }
    }

    /// A journaled job's record is held in SQLite (`log_positions`, the local
    /// journal's row): written with its job rather than carried in its writes,
    /// which a copy with one more write appended cost the loop on every send.
    func journalHeld(upTo seq: UInt64) throws(StoreError) {
        try apply(.logPosition(shard: LocalJournal.shard, seq: seq))
    }

    /// Whether a write may read or change a row of `messages`, so the waiting
    /// inserts go first. A send's inbox items and, in a cluster, every job's
    /// log position do not: they would otherwise cut every run to one row.
    private static func touchesMessages(_ write: StoreWrite) -> Bool {
        switch write {
        case .inbox, .logPosition: false
        default: true
        }
    }

    /// Inserts the waiting plain messages, the largest multi-row inserts first, and queues those with words for the index.
    private func insertWaiting() throws(StoreError) {
        var next = 0
        while next < waitingMessages.count {
            let left = waitingMessages.count - next
            // The last entry has one row, so one always fits.
            let (rows, insert) = plainInserts.first { $0.rows <= left }!
            // Every parameter of every row is bound anew: the last run's bindings need no clearing.
            let s = insert.rebind()
            for row in 0..<rows { Self.withWaiting(waitingMessages[next + row]) { MessageRows.bind($0, to: s, row: row, arena: arena) } }
            // (Stepped, the statement no longer reads what it bound in the arena.)
            defer { arena.reset() }
            try s.run()
            next += rows
        }
        for w in waitingMessages {
            if let uid = Self.withWaiting(w, { MessageRows.hasWords($0) ? $0.uid : nil }) { try queue(uid) }
        }
        waitingMessages.removeAll(keepingCapacity: true)
    }

    /// `body` with a waiting message, read where it lies.
    private static func withWaiting<R>(_ w: (writes: [StoreWrite], index: Int), _ body: (MessageRecord) -> R) -> R {
        guard case .message(let m) = w.writes[w.index] else { preconditionFailure("a waiting write is a message") }
        return body(m)
    }

    private func apply(_ write: StoreWrite) throws(StoreError) {
        switch write {
        case .message(let m):
            // Plain messages wait for `insertWaiting`; only full ones come here.
            let s = insertFull.reset()
            MessageRows.bind(m, to: s, arena: arena)
            defer { arena.reset() }
            try s.run()
            for a in m.attachments {
                attachFile.reset().bind(1, m.uid)
                attachFile.bind(2, a.fileID)
                try attachFile.run()
            }
            if MessageRows.hasWords(m) { try queue(m.uid) }
        case .receivedSeq(let user, let channel, let seq):
            let s = saveReceivedSeq.reset()
            s.bind(1, user); s.bind(2, channel); s.bind(3, seq)
            try s.run()
        case .messageEdited(let uid, let content, let time, _):
            let s = editMessage.reset()
            switch content {
            case .text(let text): s.bind(1, Int64(0)); s.bind(2, text); s.bind(3, ""); s.bind(4, [UInt8]())
            case .custom(let type, let data): s.bind(1, Int64(1)); s.bind(2, ""); s.bind(3, type); s.bind(4, data)
            }
            s.bind(5, time); s.bind(6, uid)
            try s.run()
            try queue(uid)
        case .messageRemoved(let uid, let removal, _):
            let s = removeMessage.reset()
            s.bind(1, Int64(removal.kind.rawValue)); s.bind(2, removal.by); s.bind(3, removal.time); s.bind(4, uid)
            try s.run()
            removeReactions.reset().bind(1, uid)
            try removeReactions.run()
            removeMessageFiles.reset().bind(1, uid)
            try removeMessageFiles.run()
            try queue(uid)
        case .fileCreated(let f):
            let s = saveFile.reset()
            s.bind(1, f.id); s.bind(2, f.uploader); s.bind(3, f.serverID); s.bind(4, f.channelID); s.bind(5, f.filename)
            s.bind(6, f.contentType); s.bind(7, f.size); s.bind(8, f.sha256); s.bind(9, f.createdAt)
            try s.run()
        case .fileSwept(let id, _, _):
            deleteFile.reset().bind(1, id)
            try deleteFile.run()
        case .threadReply(let root, let time, _):
            let s = countThreadReply.reset()
            s.bind(1, time); s.bind(2, root)
            try s.run()
        case .reaction(let uid, let user, let type, let added, let time, _):
            let s = (added ? addReaction : removeReaction).reset()
            s.bind(1, uid); s.bind(2, user); s.bind(3, UInt64(type))
            if added { s.bind(4, time) }
            try s.run()
        case .directory(let change):
            try apply(change)
        case .readPosition(let user, let channel, let p):
            let s = savePosition.reset()
            s.bind(1, user); s.bind(2, channel); s.bind(3, p.readSeq); s.bind(4, p.ackTime); s.bind(5, p.activity)
            try s.run()
        case .inbox(let row):
            let s = insertInbox.reset()
            s.bind(1, row.ord); s.bind(2, row.user); s.bind(3, row.at); s.bind(4, row.messageUID); s.bind(5, row.event)
            try s.run()
        case .syncCursor(let user, let device, let ord):
            let s = saveCursor.reset()
            s.bind(1, user); s.bind(2, device); s.bind(3, ord)
            try s.run()
        case .receivedStatus(let user, let uid, let flags):
            let s = saveReceived.reset()
            s.bind(1, user); s.bind(2, uid); s.bind(3, UInt64(flags.rawValue))
            try s.run()
        case .pinned(let p):
            let s = savePin.reset()
            s.bind(1, p.channelID); s.bind(2, p.messageUID); s.bind(3, p.pinnedBy); s.bind(4, p.pinnedAt)
            try s.run()
        case .unpinned(let channel, let uid):
            let s = removePin.reset()
            s.bind(1, channel); s.bind(2, uid)
            try s.run()
        case .presence(let user, let choice, let lastSeen):
            let s = savePresence.reset()
            s.bind(1, user); s.bind(2, UInt64(choice.status.rawValue)); s.bind(3, choice.text); s.bind(4, lastSeen)
            try s.run()
        case .logPosition(let shard, let seq):
            let s = saveLogPosition.reset()
            s.bind(1, Int64(shard)); s.bind(2, seq)
            try s.run()
        case .pruneInbox(let before):
            let s = pruneInbox.reset()
            s.bind(1, before)
            try s.run()
        case .audited(let entry): try audit.save(entry)
        case .pruneAuditLog(let before): try audit.prune(before: before)
        case .directBlock(let blocker, let blocked, let blocks):
            let s = (blocks ? saveBlock : removeBlock).reset()
            s.bind(1, blocker); s.bind(2, blocked)
            try s.run()
        case .directPrivacy(let user, let serverMatesOnly):
            let s = (serverMatesOnly ? savePrivacy : removePrivacy).reset()
            s.bind(1, user)
            try s.run()
        case .webhookSaved(let w):
            let s = saveWebhook.reset()
            s.bind(1, w.id); s.bind(2, w.serverID); s.bind(3, w.channelID); s.bind(4, w.name); s.bind(5, w.secretHash); s.bind(6, w.createdBy)
            s.bind(7, w.createdAt)
            try s.run()
        case .webhookDeleted(let id, _):
            let s = deleteWebhook.reset()
            s.bind(1, id)
            try s.run()
        case .pushRegistered(let r):
            let s = savePushToken.reset()
            s.bind(1, r.user); s.bind(2, r.device); s.bind(3, r.platform); s.bind(4, r.token); s.bind(5, r.previews); s.bind(6, r.updatedAt)
            try s.run()
        case .pushUnregistered(let user, let device):
            let s = removePushToken.reset()
            s.bind(1, user); s.bind(2, device)
            try s.run()
        case .profile(let p):
            let s = saveProfile.reset()
            s.bind(1, p.user); s.bind(2, p.displayName); s.bind(3, p.avatar); s.bind(4, p.updatedAt)
            try s.run()
        case .receiptRequest(let channel, let r):
            let s = saveReceiptRequest.reset()
            s.bind(1, r.uid); s.bind(2, channel); s.bind(3, r.seq); s.bind(4, r.requester); s.bind(5, r.sentTime)
            try s.run()
        case .receiptAdvance(let channel, let a):
            let s = insertAdvance.reset()
            s.bind(1, channel); s.bind(2, a.user); s.bind(3, a.from); s.bind(4, a.to); s.bind(5, a.time)
            try s.run()
        case .conversation(let id, let users, let createdAt):
            let s = saveConversation.reset()
            s.bind(1, id); s.bind(2, users[0]); s.bind(3, users[1]); s.bind(4, createdAt)
            try s.run()
        case .group(let g):
            let s = saveGroup.reset()
            s.bind(1, g.id); s.bind(2, g.createdAt); s.bind(3, g.name); s.bind(4, g.owner); s.bind(5, Int64(g.membersMayAdd ? 2 : 1))
            try s.run()
            let clear = clearGroupMembers.reset()
            clear.bind(1, g.id)
            try clear.run()
            for user in g.members {
                let m = addGroupMember.reset()
                m.bind(1, g.id); m.bind(2, user)
                try m.run()
            }
            for drop in [dropLeaversSides, dropLeaversReads] {
                let d = drop.reset()
                d.bind(1, g.id)
                try d.run()
            }
        case .directSide(let conversation, let side):
            let s = saveDirectSide.reset()
            s.bind(1, conversation); s.bind(2, side.user); s.bind(3, side.deliveredSeq); s.bind(4, side.readTime); s.bind(5, side.readCount)
            try s.run()
        case .directRead(let conversation, let reader, let uid, let sentTime):
            let s = saveDirectRead.reset()
            s.bind(1, uid); s.bind(2, conversation); s.bind(3, reader); s.bind(4, sentTime)
            try s.run()
        }
    }

    private func apply(_ change: DirectoryChange) throws(StoreError) {
        switch change {
        case .serverSaved(let r):
            let s = saveServer.reset()
            s.bind(1, r.id); s.bind(2, r.name); s.bind(3, r.icon); s.bind(4, r.custom)
            s.bind(5, r.owner); s.bind(6, r.openJoin); s.bind(7, r.createdAt); s.bind(8, r.allowGuests); s.bind(9, r.discoverable)
            try s.run()
        case .serverDeleted(let id):
            for s in [deleteServer, deleteServerMembers, deleteServerInvites, deleteServerChannels, deleteServerBans, deleteServerRoles,
                      deleteServerOverrides, deleteServerCodes, deleteServerTimeouts, deleteServerWebhooks] {
                s.reset().bind(1, id)
                try s.run()
            }
            try audit.serverDeleted(id)
        case .memberSaved(let m):
            let s = saveMember.reset()
            s.bind(1, m.serverID); s.bind(2, m.userID); s.bind(3, Int64(m.isOwner ? Role.owner.rawValue : Role.member.rawValue))
            s.bind(4, m.joinedAt); s.bind(5, MemberRows.text(m.roles)); s.bind(6, m.nickname); s.bind(7, m.displayName); s.bind(8, m.avatar)
            try s.run()
        case .memberRemoved(let server, let user):
            for s in [removeMember, deleteMemberOverrides, removeTimeout] {
                s.reset().bind(1, server)
                s.bind(2, user)
                try s.run()
            }
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
            s.bind(7, Int64(c.guestVisibility.rawValue)); s.bind(8, UInt64(c.slowModeSeconds))
            try s.run()
        case .channelDeleted(let id):
            for s in [deleteChannel, deleteChannelPositions, deleteChannelRequests, deleteChannelAdvances, deleteChannelOverrides, deleteChannelCodes, deleteChannelPins,
                      deleteChannelWebhooks] {
                s.reset().bind(1, id)
                try s.run()
            }
        case .banSaved(let b):
            let s = saveBan.reset()
            s.bind(1, b.serverID); s.bind(2, b.userID); s.bind(3, b.actor); s.bind(4, b.createdAt); s.bind(5, b.expiresAt)
            try s.run()
        case .banRemoved(let server, let user):
            let s = removeBan.reset()
            s.bind(1, server); s.bind(2, user)
            try s.run()
        case .roleSaved(let r):
            let s = saveRole.reset()
            s.bind(1, r.serverID); s.bind(2, r.id); s.bind(3, r.name); s.bind(4, UInt64(r.position))
            s.bind(5, r.permissions.allow.rawValue); s.bind(6, r.permissions.deny.rawValue); s.bind(7, r.createdAt)
            try s.run()
        case .roleDeleted(let server, let id):
            for s in [deleteRole, deleteRoleOverrides] {
                s.reset().bind(1, server)
                s.bind(2, id)
                try s.run()
            }
        case .overrideSaved(let o):
            let (role, user): (Int64, String) = switch o.target {
            case .role(let id): (Int64(id), "")
            case .member(let u): (-1, u)
            }
            let s = (o.permissions.isInherit ? removeOverride : saveOverride).reset()
            s.bind(1, o.serverID); s.bind(2, o.channelID); s.bind(3, role); s.bind(4, user)
            if !o.permissions.isInherit { s.bind(5, o.permissions.allow.rawValue); s.bind(6, o.permissions.deny.rawValue) }
            try s.run()
        case .inviteCodeSaved(let c):
            let s = saveCode.reset()
            s.bind(1, c.code); s.bind(2, c.serverID); s.bind(3, c.channelID); s.bind(4, c.creator); s.bind(5, c.createdAt)
            s.bind(6, c.expiresAt); s.bind(7, UInt64(c.maxUses)); s.bind(8, UInt64(c.uses))
            try s.run()
        case .inviteCodeRemoved(_, let code):
            let s = removeCode.reset()
            s.bind(1, code)
            try s.run()
        case .timeoutSaved(let t):
            let s = saveTimeout.reset()
            s.bind(1, t.serverID); s.bind(2, t.userID); s.bind(3, t.until); s.bind(4, t.actor)
            try s.run()
        case .timeoutRemoved(let server, let user):
            let s = removeTimeout.reset()
            s.bind(1, server); s.bind(2, user)
            try s.run()
        }
    }

    // MARK: The search queue

    /// The message's words changed (it came, was edited or removed): the indexer reads it again.
    private func queue(_ uid: MessageUID) throws(StoreError) {
        guard let s = queueForSearch?.reset() else { return }
        s.bind(1, uid)
        try s.run()
        queued = true
    }

    /// Before a transaction commits: now and then, the rows the index has applied go.
    func beforeCommit() throws(StoreError) {
        if !waitingMessages.isEmpty { try insertWaiting() }
        sincePruned += 1
        guard let prune = pruneSearchQueue, let indexer, sincePruned >= 64 else { return }
        sincePruned = 0
        prune.reset().bind(1, indexer.applied)
        try prune.run()
    }

    /// A transaction ended (`committed` or not): the indexer hears of what it queued.
    func ended(committed: Bool) {
        if committed && queued { indexer?.wake() }
        queued = false
        waitingMessages.removeAll(keepingCapacity: true)
    }
}
