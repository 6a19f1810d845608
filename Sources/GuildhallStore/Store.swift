// The store's front door: opens the database folder, migrates it, loads the
// snapshot the loop starts from, and starts the writer, reader and checkpoint threads.
//
// Files: <folder>/guildhall.db (+ -wal, -shm). WAL mode; `synchronous` is
// NORMAL (survives a process crash) or FULL (survives power loss).

import Foundation
import GuildhallCore

/// Everything the loop needs in memory at startup.
public struct StoreSnapshot: Sendable {
    public var servers: [ServerRecord] = []
    public var members: [MemberRecord] = []
    public var invites: [InviteRecord] = []
    public var inviteCodes: [InviteCode] = []
    public var timeouts: [TimeoutRecord] = []
    public var pins: [PinRecord] = []
    public var webhooks: [WebhookRecord] = []
    /// Channels with their `lastSeq` and `lastMessageTime` filled in.
    public var channels: [ChannelRecord] = []
    /// The highest id ever issued (messages, servers, channels), so ids never repeat.
    public var highestID: UInt64 = 0
    /// Messages with a client id sent since the de-duplication window began.
    /// Sends with a client id since the de-duplication window's floor: (uid, sender, client id), in UID order.
    public var recentClientSends: [(uid: MessageUID, sender: UserID, clientID: String)] = []
    public var bans: [BanRecord] = []
    public var roles: [RoleRecord] = []
    public var overrides: [OverrideRecord] = []
    public var readPositions: [(UserID, ChannelID, ReadPosition)] = []
    /// The highest seq per user and channel a device acknowledged receiving.
    public var receivedSeqs: [(UserID, ChannelID, UInt64)] = []
    /// Mentions by id since the mention window began: (user, channel, seq, time).
    public var recentMentions: [(UserID, ChannelID, UInt64, UInt64)] = []
    /// The highest inbox ord ever written, so ords keep increasing.
    public var highestInboxOrd: UInt64 = 0
    /// Group read receipts: requested messages, and cursor advances in the order they were made.
    public var receiptRequests: [(ChannelID, ChannelReceipts.Request)] = []
    public var receiptAdvances: [(ChannelID, ChannelReceipts.Advance)] = []
    /// Direct conversations with their sides, message tails and single reads applied.
    public var conversations: [DirectConversation] = []
    /// Users' presence choices and last-seen times.
    public var presences: [(UserID, PresenceChoice, lastSeen: UInt64)] = []
    /// Users' profiles.
    public var profiles: [UserProfile] = []
    /// Devices' push tokens.
    public var pushRegistrations: [PushRegistration] = []
    /// Who blocks whom in direct conversations (blocker, blocked).
    public var blocks: [(UserID, UserID)] = []
    /// Users who accept direct messages only from server-mates.
    public var serverMatesOnly: [UserID] = []
    /// In a cluster: the generation of each shard's state this snapshot was loaded for (JobShards).
    public var generations: [Int: UInt64] = [:]

    public init() {}
}

public struct StoreOptions: Sendable {
    public var folder: String
    /// "NORMAL" or "FULL".
    public var synchronous: String
    /// Most jobs per transaction.
    public var maxBatch: Int
    /// How often committed WAL frames are copied into the database file.
    public var checkpointMillis: Int
    /// The WAL's length, in pages, past which a checkpoint starts it over (Checkpointer.swift).
    public var walRestartPages = Self.defaultWALRestartPages
    public static let defaultWALRestartPages: Int32 = 2000
    /// Messages with client ids newer than this UID are loaded for de-duplication.
    public var clientIDFloorUID: UInt64
    /// Whether messages' words are indexed for search (SearchIndex.swift).
    public var searchIndex = true
    /// The local journal's format (LocalJournal.swift): with it, a journal left
    /// by a crash is replayed at open. `journalAhead` also answers a loop's
    /// small commits once journaled (a single node under NORMAL only).
    public var journalCodec: JournalCodec?
    public var journalAhead = false
    /// The journal's size past which it starts over once SQLite holds all of it.
    public var journalRestartBytes = LocalJournal.defaultRestartBytes
    /// How long the writer waits for more journaled jobs once it stored some (`JournalAhead.gatherSeconds`).
    public var journalGatherSeconds = JournalAhead.defaultGatherSeconds

    public init(folder: String, synchronous: String = "NORMAL", maxBatch: Int = 512, checkpointMillis: Int = 200, clientIDFloorUID: UInt64 = 0) {
        self.folder = folder; self.synchronous = synchronous; self.maxBatch = maxBatch; self.checkpointMillis = checkpointMillis
        self.clientIDFloorUID = clientIDFloorUID
    }
}

/// The records of the local journal an open stored in SQLite, and those SQLite refused.
public struct JournalReplay: Sendable {
    public let stored: Int
    public let refused: [StoreError]
}

public final class Store: Sendable {
    public let writer: StoreWriter
    public let reader: StoreReader
    private let checkpointer: Checkpointer
    public let path: String
    /// What the open found in the local journal and stored (a crash's last answered writes).
    public let journalReplay: JournalReplay

    /// Opens (creating if needed) the database; outcomes and results are
    /// delivered on the store threads through the two callbacks.
    public init(_ options: StoreOptions,
                onCommitted: @escaping @Sendable ([WriteOutcome]) -> Void,
                onRead: @escaping @Sendable ([ReadResult]) -> Void) throws(StoreError) {
        do {
            try FileManager.default.createDirectory(atPath: options.folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError(code: -1, message: "cannot create data folder \(options.folder): \(error)")
        }
        let sync = options.synchronous.uppercased()
        guard sync == "NORMAL" || sync == "FULL" else {
            throw StoreError(code: -1, message: "synchronous must be NORMAL or FULL, not \(options.synchronous)")
        }
        path = (options.folder as NSString).appendingPathComponent("guildhall.db")
        writer = try StoreWriter(path: path, synchronous: sync, maxBatch: options.maxBatch, searchIndex: options.searchIndex,
                                 onCommitted: onCommitted)
        if let codec = options.journalCodec {
            let journal = try LocalJournal(folder: options.folder, restartBytes: options.journalRestartBytes)
            let (held, report) = try Store.replay(journal, codec: codec, into: writer, path: path)
            journalReplay = report
            if options.journalAhead && sync == "NORMAL" {
                writer.ahead.current = JournalAhead(journal, codec: codec, heldUpTo: held, queue: writer.queue,
                                                     gatherSeconds: options.journalGatherSeconds)
            }
        } else {
            journalReplay = JournalReplay(stored: 0, refused: [])
        }
        reader = try StoreReader(path: path, indexer: writer.indexer, ahead: writer.ahead, onResult: onRead)
        checkpointer = try Checkpointer(path: path, everyMillis: max(10, options.checkpointMillis), restartPages: options.walRestartPages,
                                        restart: writer.walRestart)
    }

    /// Commits the journal's records SQLite lacks, then starts the file over;
    /// returns the last record SQLite holds, how many it stored and those it refused.
    private static func replay(_ journal: LocalJournal, codec: JournalCodec, into writer: StoreWriter,
                               path: String) throws(StoreError) -> (held: UInt64, report: JournalReplay) {
        let held = try logPositions(path)[LocalJournal.shard] ?? 0
        let records = try journal.records().filter { $0.seq > held }
        if let first = records.first, first.seq != held + 1 {
            // SQLite lost records before these (a power loss): storing them would leave a hole.
            try journal.startOver(after: held)
            let gap = StoreError(code: -1, message: "journal records \(first.seq)...\(records.last!.seq) follow a gap after \(held); not stored")
            return (held, JournalReplay(stored: 0, refused: [gap]))
        }
        var missing: [(seq: UInt64, writes: [StoreWrite])] = []
        for r in records {
            do { missing.append((r.seq, try codec.decode(r.payload))) } catch {
                throw StoreError(code: -1, message: "journal record \(r.seq) cannot be read: \(error)")
            }
        }
        let refused = try writer.replayJournal(missing)
        let last = missing.last?.seq ?? held
        try journal.startOver(after: last)
        return (last, JournalReplay(stored: missing.count - refused.count, refused: refused))
    }

    /// In a cluster: how far this database has applied each shard's log (stream sequences).
    public func logPositions() throws(StoreError) -> [Int: UInt64] { try Store.logPositions(path) }

    private static func logPositions(_ path: String) throws(StoreError) -> [Int: UInt64] {
        let db = try SQLiteConnection(path: path, readOnly: true)
        let s = try db.prepare("SELECT shard, seq FROM log_positions", persistent: false)
        var out: [Int: UInt64] = [:]
        while try s.step() { out[Int(s.int(0))] = s.uint(1) }
        return out
    }

    /// Reads the startup snapshot on the calling thread with a connection of its own.
    public func loadSnapshot(clientIDFloorUID: UInt64, mentionFloorUID: UInt64 = UInt64.max) throws(StoreError) -> StoreSnapshot {
        let db = try SQLiteConnection(path: path, readOnly: true)
        var snap = StoreSnapshot()
        var s = try db.prepare("SELECT id, name, icon, custom, owner, open_join, created_at, allow_guests, discoverable FROM servers", persistent: false)
        while try s.step() {
            snap.servers.append(ServerRecord(id: s.uint(0), name: s.text(1), icon: s.text(2), custom: s.text(3),
                                             owner: s.text(4), openJoin: s.bool(5), createdAt: s.uint(6), allowGuests: s.bool(7),
                                             discoverable: s.bool(8)))
        }
        s = try db.prepare("SELECT server_id, user_id, actor, created_at, expires_at FROM bans", persistent: false)
        while try s.step() {
            snap.bans.append(BanRecord(serverID: s.uint(0), userID: s.text(1), actor: s.text(2), createdAt: s.uint(3), expiresAt: s.uint(4)))
        }
        s = try db.prepare("SELECT channel_id, message_uid, pinned_by, pinned_at FROM pins", persistent: false)
        while try s.step() { snap.pins.append(PinRecord(channelID: s.uint(0), messageUID: s.uint(1), pinnedBy: s.text(2), pinnedAt: s.uint(3))) }
        s = try db.prepare("SELECT id, server_id, channel_id, name, secret_hash, created_by, created_at FROM webhooks", persistent: false)
        while try s.step() {
            snap.webhooks.append(WebhookRecord(id: s.uint(0), serverID: s.uint(1), channelID: s.uint(2), name: s.text(3), secretHash: s.text(4),
                                               createdBy: s.text(5), createdAt: s.uint(6)))
        }
        s = try db.prepare("SELECT server_id, user_id, until, actor FROM timeouts", persistent: false)
        while try s.step() { snap.timeouts.append(TimeoutRecord(serverID: s.uint(0), userID: s.text(1), until: s.uint(2), actor: s.text(3))) }
        s = try db.prepare("SELECT user_id, channel_id, read_seq, ack_time, activity FROM read_positions", persistent: false)
        while try s.step() {
            snap.readPositions.append((s.text(0), s.uint(1), ReadPosition(readSeq: s.uint(2), ackTime: s.uint(3), activity: s.uint(4))))
        }
        s = try db.prepare("SELECT user_id, channel_id, seq FROM received_seqs", persistent: false)
        while try s.step() { snap.receivedSeqs.append((s.text(0), s.uint(1), s.uint(2))) }
        s = try db.prepare("SELECT channel_id, seq, sent_time, mentions FROM messages WHERE uid >= ? AND mentions != ''", persistent: false)
        s.bind(1, mentionFloorUID)
        while try s.step() {
            for user in s.text(3).split(separator: "\n") { snap.recentMentions.append((String(user), s.uint(0), s.uint(1), s.uint(2))) }
        }
        s = try db.prepare("SELECT server_id, user_id, role, joined_at, roles, nickname, display_name, avatar FROM members", persistent: false)
        while try s.step() {
            var m = MemberRecord(serverID: s.uint(0), userID: s.text(1), role: Role(rawValue: Int(s.int(2))) ?? .member,
                                 joinedAt: s.uint(3), roles: MemberRows.roles(s.text(4)))
            (m.nickname, m.displayName, m.avatar) = (s.text(5), s.text(6), s.text(7))
            snap.members.append(m)
        }
        s = try db.prepare("SELECT server_id, role_id, name, position, allow, deny, created_at FROM roles", persistent: false)
        while try s.step() {
            snap.roles.append(RoleRecord(serverID: s.uint(0), id: s.uint(1), name: s.text(2), position: UInt32(clamping: s.uint(3)),
                                         permissions: PermissionOverride(allow: Permission(rawValue: s.uint(4)), deny: Permission(rawValue: s.uint(5))),
                                         createdAt: s.uint(6)))
        }
        s = try db.prepare("SELECT server_id, channel_id, role_id, user_id, allow, deny FROM overrides", persistent: false)
        while try s.step() {
            let target: OverrideTarget = s.int(2) < 0 ? .member(s.text(3)) : .role(s.uint(2))
            snap.overrides.append(OverrideRecord(serverID: s.uint(0), channelID: s.uint(1), target: target,
                                                 permissions: PermissionOverride(allow: Permission(rawValue: s.uint(4)), deny: Permission(rawValue: s.uint(5)))))
        }
        s = try db.prepare("SELECT server_id, user_id, inviter, created_at FROM invites", persistent: false)
        while try s.step() {
            snap.invites.append(InviteRecord(serverID: s.uint(0), userID: s.text(1), inviter: s.text(2), createdAt: s.uint(3)))
        }
        s = try db.prepare("SELECT code, server_id, channel_id, creator, created_at, expires_at, max_uses, uses FROM invite_codes", persistent: false)
        while try s.step() {
            snap.inviteCodes.append(InviteCode(code: s.text(0), serverID: s.uint(1), channelID: s.uint(2), creator: s.text(3), createdAt: s.uint(4),
                                               expiresAt: s.uint(5), maxUses: UInt32(clamping: s.uint(6)), uses: UInt32(clamping: s.uint(7))))
        }
        var removed: [ChannelID: [UInt64]] = [:]
        s = try db.prepare("SELECT channel_id, seq FROM messages WHERE removed != 0 AND server_id != 0", persistent: false)
        while try s.step() { removed[s.uint(0), default: []].append(s.uint(1)) }
        s = try db.prepare("SELECT id, server_id, name, topic, custom, created_at, guest_visibility, slow_mode FROM channels", persistent: false)
        let tail = try db.prepare("SELECT seq, sent_time FROM messages WHERE channel_id = ? ORDER BY seq DESC LIMIT 1", persistent: false)
        while try s.step() {
            var c = ChannelRecord(id: s.uint(0), serverID: s.uint(1), name: s.text(2), topic: s.text(3), custom: s.text(4), createdAt: s.uint(5),
                                  guestVisibility: GuestVisibility(rawValue: Int(s.int(6))) ?? .followServer,
                                  slowModeSeconds: UInt32(clamping: s.uint(7)))
            tail.reset().bind(1, c.id)
            if try tail.step() {
                c.lastSeq = tail.uint(0)
                c.lastMessageTime = tail.uint(1)
            }
            tail.reset()
            if let seqs = removed[c.id] { c.removed = RemovedSeqs(seqs) }
            snap.channels.append(c)
        }
        s = try db.prepare("SELECT message_uid, channel_id, seq, requester, sent_time FROM receipt_requests", persistent: false)
        while try s.step() {
            snap.receiptRequests.append((s.uint(1), ChannelReceipts.Request(uid: s.uint(0), seq: s.uint(2), requester: s.text(3), sentTime: s.uint(4))))
        }
        s = try db.prepare("SELECT channel_id, user_id, from_seq, to_seq, time FROM receipt_advances ORDER BY rowid", persistent: false)
        while try s.step() {
            snap.receiptAdvances.append((s.uint(0), ChannelReceipts.Advance(user: s.text(1), from: s.uint(2), to: s.uint(3), time: s.uint(4))))
        }
        snap.conversations = try loadConversations(db)
        s = try db.prepare("SELECT user_id, status, text, last_seen FROM presence", persistent: false)
        while try s.step() {
            let choice = PresenceChoice(status: PresenceStatus(rawValue: Int(s.int(1))) ?? .online, text: s.text(2))
            snap.presences.append((s.text(0), choice, s.uint(3)))
        }
        s = try db.prepare("SELECT user_id, display_name, avatar, updated_at FROM profiles", persistent: false)
        while try s.step() { snap.profiles.append(UserProfile(user: s.text(0), displayName: s.text(1), avatar: s.text(2), updatedAt: s.uint(3))) }
        s = try db.prepare("SELECT blocker, blocked FROM direct_blocks", persistent: false)
        while try s.step() { snap.blocks.append((s.text(0), s.text(1))) }
        s = try db.prepare("SELECT user_id FROM direct_privacy", persistent: false)
        while try s.step() { snap.serverMatesOnly.append(s.text(0)) }
        s = try db.prepare("SELECT user_id, device_id, platform, token, previews, updated_at FROM push_tokens", persistent: false)
        while try s.step() {
            snap.pushRegistrations.append(PushRegistration(user: s.text(0), device: s.text(1), platform: s.text(2), token: s.text(3),
                                                           previews: s.bool(4), updatedAt: s.uint(5)))
        }
        snap.highestInboxOrd = UInt64(try db.scalar("SELECT IFNULL(MAX(ord), 0) FROM inbox"))
        snap.highestID = max(UInt64(try db.scalar("SELECT IFNULL(MAX(uid), 0) FROM messages")),
                             UInt64(try db.scalar("SELECT IFNULL(MAX(id), 0) FROM servers")),
                             UInt64(try db.scalar("SELECT IFNULL(MAX(id), 0) FROM channels")),
                             UInt64(try db.scalar("SELECT IFNULL(MAX(id), 0) FROM conversations")))
        s = try db.prepare("SELECT uid, sender, client_id FROM messages WHERE uid >= ? AND client_id != '' ORDER BY uid", persistent: false)
        s.bind(1, clientIDFloorUID)
        while try s.step() { snap.recentClientSends.append((s.uint(0), s.text(1), s.text(2))) }
        return snap
    }

    private func loadConversations(_ db: SQLiteConnection) throws(StoreError) -> [DirectConversation] {
        var byID: [UInt64: DirectConversation] = [:]
        var members: [UInt64: [UserID]] = [:]
        var s = try db.prepare("SELECT conversation_id, user_id FROM group_members", persistent: false)
        while try s.step() { members[s.uint(0), default: []].append(s.text(1)) }
        s = try db.prepare("SELECT id, user_a, user_b, created_at, name, owner, kind FROM conversations", persistent: false)
        while try s.step() {
            let id = s.uint(0)
            byID[id] = s.int(6) == 0 ? DirectConversation(id: id, users: (s.text(1), s.text(2)), createdAt: s.uint(3))
                : DirectConversation(group: id, name: s.text(4), owner: s.text(5), members: members[id] ?? [], membersMayAdd: s.int(6) == 2,
                                     createdAt: s.uint(3))
        }
        // Removed (recalled or deleted) messages keep their rows but count for no one's unread.
        // Withheld ones (their recipient blocks the sender) neither.
        s = try db.prepare("SELECT channel_id, sender, SUM(removed = 0 AND withheld = 0), MAX(seq), MAX(sent_time) FROM messages WHERE server_id = 0 GROUP BY channel_id, sender",
                           persistent: false)
        while try s.step() {
            byID[s.uint(0)]?.loadTail(sender: s.text(1), count: s.uint(2), lastSeq: s.uint(3), lastTime: s.uint(4))
        }
        s = try db.prepare("SELECT conversation_id, user_id, delivered_seq, read_time, read_count FROM direct_sides", persistent: false)
        while try s.step() {
            var side = DirectConversation.Side(user: s.text(1))
            side.deliveredSeq = s.uint(2); side.readTime = s.uint(3); side.readCount = s.uint(4)
            if byID[s.uint(0)]?.includes(side.user) == true { byID[s.uint(0)]!.load(side) }
        }
        s = try db.prepare("SELECT conversation_id, reader, message_uid, sent_time FROM direct_reads", persistent: false)
        while try s.step() {
            if byID[s.uint(0)]?.includes(s.text(1)) == true { _ = byID[s.uint(0)]!.readOne(by: s.text(1), uid: s.uint(2), sentTime: s.uint(3)) }
        }
        return Array(byID.values)
    }

    /// Commits what is queued and stops both threads; returns how many statements were
    /// left stepped and not reset (a leak that holds a transaction open: 0 expected).
    @discardableResult
    public func close() -> Int {
        writer.stop()
        writer.ahead.current?.journal.close()
        reader.stop()
        checkpointer.stop()
        return writer.busyAtClose.value + reader.busyAtClose.value
    }
}
