// The database schema, as numbered migrations. `PRAGMA user_version` holds
// the number of migrations applied; a new migration is appended, never edited.
//
// Channel tails (last seq and time) are not stored: they are derived from
// messages at startup, which saves a row update per message.

enum Schema {
    static let migrations: [String] = [
        // 1: servers, members, invitations, channels, channel messages.
        """
        CREATE TABLE servers(
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            icon TEXT NOT NULL,
            custom TEXT NOT NULL,
            owner TEXT NOT NULL,
            open_join INTEGER NOT NULL,
            created_at INTEGER NOT NULL);
        CREATE TABLE members(
            server_id INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            role INTEGER NOT NULL,
            joined_at INTEGER NOT NULL,
            PRIMARY KEY(server_id, user_id)) WITHOUT ROWID;
        CREATE TABLE invites(
            server_id INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            inviter TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY(server_id, user_id)) WITHOUT ROWID;
        CREATE TABLE channels(
            id INTEGER PRIMARY KEY,
            server_id INTEGER NOT NULL,
            name TEXT NOT NULL,
            topic TEXT NOT NULL,
            custom TEXT NOT NULL,
            created_at INTEGER NOT NULL);
        CREATE INDEX channels_by_server ON channels(server_id);
        CREATE TABLE messages(
            uid INTEGER PRIMARY KEY,
            server_id INTEGER NOT NULL,
            channel_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            sender TEXT NOT NULL,
            sent_time INTEGER NOT NULL,
            kind INTEGER NOT NULL,
            text TEXT NOT NULL,
            custom_type TEXT NOT NULL,
            payload BLOB,
            mentions TEXT NOT NULL,
            mention_all INTEGER NOT NULL,
            need_receipt INTEGER NOT NULL,
            client_id TEXT NOT NULL);
        CREATE UNIQUE INDEX messages_by_channel_seq ON messages(channel_id, seq);
        """,
        // 2: guests, bans, read positions.
        """
        ALTER TABLE servers ADD COLUMN allow_guests INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE channels ADD COLUMN guest_visibility INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE bans(
            server_id INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY(server_id, user_id)) WITHOUT ROWID;
        CREATE TABLE read_positions(
            user_id TEXT NOT NULL,
            channel_id INTEGER NOT NULL,
            read_seq INTEGER NOT NULL,
            ack_time INTEGER NOT NULL,
            activity INTEGER NOT NULL,
            PRIMARY KEY(user_id, channel_id)) WITHOUT ROWID;
        """,
        // 3: offline sync: the per-user inbox, device cursors, received status.
        """
        CREATE TABLE inbox(
            ord INTEGER PRIMARY KEY,
            user_id TEXT NOT NULL,
            at INTEGER NOT NULL,
            message_uid INTEGER NOT NULL,
            event BLOB NOT NULL);
        CREATE INDEX inbox_by_user ON inbox(user_id, ord);
        CREATE INDEX inbox_by_time ON inbox(at);
        CREATE TABLE sync_cursors(
            user_id TEXT NOT NULL,
            device_id TEXT NOT NULL,
            ord INTEGER NOT NULL,
            PRIMARY KEY(user_id, device_id)) WITHOUT ROWID;
        CREATE TABLE received_status(
            user_id TEXT NOT NULL,
            message_uid INTEGER NOT NULL,
            flags INTEGER NOT NULL,
            PRIMARY KEY(user_id, message_uid)) WITHOUT ROWID;
        """,
        // 4: group read receipts: requested messages, and members' cursor
        // advances (one row per advance, in rowid order).
        """
        CREATE TABLE receipt_requests(
            message_uid INTEGER PRIMARY KEY,
            channel_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            requester TEXT NOT NULL,
            sent_time INTEGER NOT NULL);
        CREATE INDEX receipt_requests_by_channel ON receipt_requests(channel_id);
        CREATE TABLE receipt_advances(
            channel_id INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            from_seq INTEGER NOT NULL,
            to_seq INTEGER NOT NULL,
            time INTEGER NOT NULL);
        CREATE INDEX receipt_advances_by_channel ON receipt_advances(channel_id);
        """,
        // 5: direct conversations. Their messages live in `messages` with
        // server_id 0 and channel_id the conversation; each side's receipt
        // state is a row; messages read one by one are rows too.
        """
        CREATE TABLE conversations(
            id INTEGER PRIMARY KEY,
            user_a TEXT NOT NULL,
            user_b TEXT NOT NULL,
            created_at INTEGER NOT NULL);
        CREATE TABLE direct_sides(
            conversation_id INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            delivered_seq INTEGER NOT NULL,
            read_time INTEGER NOT NULL,
            read_count INTEGER NOT NULL,
            PRIMARY KEY(conversation_id, user_id)) WITHOUT ROWID;
        CREATE TABLE direct_reads(
            message_uid INTEGER PRIMARY KEY,
            conversation_id INTEGER NOT NULL,
            reader TEXT NOT NULL,
            sent_time INTEGER NOT NULL);
        CREATE INDEX messages_direct ON messages(channel_id, sender, sent_time) WHERE server_id = 0;
        """,
        // 6: permissions. Every server gets the `everyone` role (id 0) and the
        // `admin` role (id 1), which today's admins hold; a member's roles are
        // a list on its row. Overrides are per channel (0: the server) for a
        // role (user_id '') or a member (role_id -1). The bits are
        // Permission.everyoneDefault (8241) and .adminDefault (8134) as they were then.
        """
        CREATE TABLE roles(
            server_id INTEGER NOT NULL,
            role_id INTEGER NOT NULL,
            name TEXT NOT NULL,
            position INTEGER NOT NULL,
            allow INTEGER NOT NULL,
            deny INTEGER NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY(server_id, role_id)) WITHOUT ROWID;
        CREATE TABLE overrides(
            server_id INTEGER NOT NULL,
            channel_id INTEGER NOT NULL,
            role_id INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            allow INTEGER NOT NULL,
            deny INTEGER NOT NULL,
            PRIMARY KEY(server_id, channel_id, role_id, user_id)) WITHOUT ROWID;
        ALTER TABLE members ADD COLUMN roles TEXT NOT NULL DEFAULT '';
        INSERT INTO roles SELECT id, 0, 'everyone', 0, 8241, 0, created_at FROM servers;
        INSERT INTO roles SELECT id, 1, 'admin', 1, 8134, 0, created_at FROM servers;
        UPDATE members SET roles = '1', role = 1 WHERE role = 2;
        """,
        // 7: message operations. A reply keeps its quote; a thread root its
        // reply count; a recalled or deleted message keeps its row (the body
        // emptied) as a tombstone, so seqs stay without holes; reactions
        // are a row per user, message and type.
        """
        ALTER TABLE messages ADD COLUMN reply_to INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN reply_sender TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN reply_excerpt TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN thread_root INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN thread_replies INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN thread_last INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN edited_time INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN edit_count INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN removed INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE messages ADD COLUMN removed_by TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN removed_time INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX messages_by_thread ON messages(thread_root, seq) WHERE thread_root != 0;
        CREATE INDEX messages_removed ON messages(channel_id, seq) WHERE removed != 0;
        CREATE TABLE reactions(
            message_uid INTEGER NOT NULL,
            user_id TEXT NOT NULL,
            type INTEGER NOT NULL,
            time INTEGER NOT NULL,
            PRIMARY KEY(message_uid, user_id, type)) WITHOUT ROWID;
        """,
        // 8: per user and channel, the highest seq a device acknowledged receiving (received status without a row per message).
        """
        CREATE TABLE received_seqs(
            user_id TEXT NOT NULL,
            channel_id INTEGER NOT NULL,
            seq INTEGER NOT NULL,
            PRIMARY KEY(user_id, channel_id)) WITHOUT ROWID;
        """,
        // 9: in a cluster, how far this database has applied each shard's log (the stream sequence).
        """
        CREATE TABLE log_positions(
            shard INTEGER PRIMARY KEY,
            seq INTEGER NOT NULL);
        """,
        // 10: message search: the words of each text message that is not
        // removed, by its uid (moved to search.db by migration 13). `stale`
        // is set while the index is off (setting search-index), so that
        // turning it on again builds it anew. No column sizes
        // (`columnsize=0`): they serve only ranking by relevance, and
        // results come newest first.
        """
        CREATE VIRTUAL TABLE message_search USING fts5(body, tokenize = 'unicode61 remove_diacritics 2', columnsize = 0);
        CREATE TABLE search_state(stale INTEGER NOT NULL);
        INSERT INTO search_state VALUES(0);
        """,
        // 11: files (docs/files.md): one row per upload asked for, in a
        // channel (server_id, channel_id) or a direct conversation
        // (server_id 0, channel_id the conversation); `message_uid` once a
        // message carries it. Every server's everyone role gains ATTACH_FILES
        // (16384). A server may be listed in the directory (`discoverable`).
        """
        CREATE TABLE files(
            id INTEGER PRIMARY KEY,
            uploader TEXT NOT NULL,
            server_id INTEGER NOT NULL,
            channel_id INTEGER NOT NULL,
            filename TEXT NOT NULL,
            content_type TEXT NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            message_uid INTEGER NOT NULL DEFAULT 0,
            removed INTEGER NOT NULL DEFAULT 0);
        CREATE INDEX files_by_uploader ON files(uploader);
        UPDATE roles SET allow = allow | 16384 WHERE role_id = 0;
        ALTER TABLE servers ADD COLUMN discoverable INTEGER NOT NULL DEFAULT 0;
        """,
        // 12: messages that carry files: their attachments (the JSON of
        // [FileAttachment]; '' for none, and for a message since removed).
        // A file's row names its message from the send on, and is marked
        // removed with it; the sweep finds uploads never sent, and removed
        // messages' files, by their own indexes.
        """
        ALTER TABLE messages ADD COLUMN attachments TEXT NOT NULL DEFAULT '';
        CREATE INDEX files_by_message ON files(message_uid) WHERE message_uid != 0;
        CREATE INDEX files_unsent ON files(created_at) WHERE message_uid = 0;
        CREATE INDEX files_removed ON files(id) WHERE removed != 0;
        """,
        // 13: the search index moves to a database of its own, search.db,
        // written by a thread of its own from a queue of the messages whose
        // words changed, which each message's transaction adds to
        // (SearchIndex.swift). search.db is built from the messages at the
        // first start after this.
        """
        DROP TABLE message_search;
        CREATE TABLE search_queue(seq INTEGER PRIMARY KEY AUTOINCREMENT, uid INTEGER NOT NULL);
        """,
        // 14: each user's presence choice and last-seen time (Presence.swift).
        """
        CREATE TABLE presence(user_id TEXT PRIMARY KEY, status INTEGER NOT NULL, text TEXT NOT NULL, last_seen INTEGER NOT NULL) WITHOUT ROWID;
        """,
        // 15: invite codes (InviteCodes.swift), and the CREATE_INVITES bit (1 << 15)
        // for the everyone and admin roles of servers made before it, as new ones have it.
        """
        CREATE TABLE invite_codes(code TEXT PRIMARY KEY, server_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, creator TEXT NOT NULL,
                                  created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, max_uses INTEGER NOT NULL, uses INTEGER NOT NULL) WITHOUT ROWID;
        CREATE INDEX invite_codes_by_server ON invite_codes(server_id);
        UPDATE roles SET allow = allow | 32768 WHERE role_id IN (0, 1);
        """,
        // 16: moderation (Moderation.swift): timeouts, bans with an end, slow mode, and
        // MODERATE_MEMBERS (1 << 16) for the admin role of servers made before it.
        """
        CREATE TABLE timeouts(server_id INTEGER NOT NULL, user_id TEXT NOT NULL, until INTEGER NOT NULL, actor TEXT NOT NULL,
                              PRIMARY KEY(server_id, user_id)) WITHOUT ROWID;
        ALTER TABLE bans ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE channels ADD COLUMN slow_mode INTEGER NOT NULL DEFAULT 0;
        UPDATE roles SET allow = allow | 65536 WHERE role_id = 1;
        """,
        // 17: pins (Pins.swift), and PIN_MESSAGES (1 << 18) for the admin role of servers made before it.
        """
        CREATE TABLE pins(channel_id INTEGER NOT NULL, message_uid INTEGER NOT NULL, pinned_by TEXT NOT NULL, pinned_at INTEGER NOT NULL,
                          PRIMARY KEY(channel_id, message_uid)) WITHOUT ROWID;
        UPDATE roles SET allow = allow | 262144 WHERE role_id = 1;
        """,
        // 18: the audit log (AuditLog.swift; `changes` is the JSON of its AuditChange list),
        // and VIEW_AUDIT_LOG (1 << 19) for the admin role of servers made before it.
        """
        CREATE TABLE audit_log(id INTEGER PRIMARY KEY, server_id INTEGER NOT NULL, actor TEXT NOT NULL, action INTEGER NOT NULL,
                               target TEXT NOT NULL, channel_id INTEGER NOT NULL, changes TEXT NOT NULL, reason TEXT NOT NULL, at INTEGER NOT NULL);
        CREATE INDEX audit_log_by_server ON audit_log(server_id, id);
        CREATE INDEX audit_log_by_time ON audit_log(at);
        UPDATE roles SET allow = allow | 524288 WHERE role_id = 1;
        """,
        // 19: profiles (Profiles.swift) and their copies on member rows, nicknames,
        // and MANAGE_NICKNAMES (1 << 20) for the admin role of servers made before it.
        """
        CREATE TABLE profiles(user_id TEXT PRIMARY KEY, display_name TEXT NOT NULL, avatar TEXT NOT NULL, updated_at INTEGER NOT NULL) WITHOUT ROWID;
        ALTER TABLE members ADD COLUMN nickname TEXT NOT NULL DEFAULT '';
        ALTER TABLE members ADD COLUMN display_name TEXT NOT NULL DEFAULT '';
        ALTER TABLE members ADD COLUMN avatar TEXT NOT NULL DEFAULT '';
        UPDATE roles SET allow = allow | 1048576 WHERE role_id = 1;
        """,
        // 20: devices' push tokens (PushNotices.swift).
        """
        CREATE TABLE push_tokens(user_id TEXT NOT NULL, device_id TEXT NOT NULL, platform TEXT NOT NULL, token TEXT NOT NULL,
                                 previews INTEGER NOT NULL, updated_at INTEGER NOT NULL, PRIMARY KEY(user_id, device_id)) WITHOUT ROWID;
        """,
        // 21: blocking (BlockUser): who blocks their peer in a direct conversation, and
        // direct messages withheld from a recipient who blocks their sender.
        """
        CREATE TABLE direct_blocks(blocker TEXT NOT NULL, blocked TEXT NOT NULL, PRIMARY KEY(blocker, blocked)) WITHOUT ROWID;
        ALTER TABLE messages ADD COLUMN withheld INTEGER NOT NULL DEFAULT 0;
        """,
        // 22: group conversations. A group's row has no pair (user_a, user_b
        // empty), a name, an owner and a kind (0 a pair, 1 a group, 2 a group
        // whose members may add members); its members are rows of their own.
        """
        ALTER TABLE conversations ADD COLUMN name TEXT NOT NULL DEFAULT '';
        ALTER TABLE conversations ADD COLUMN owner TEXT NOT NULL DEFAULT '';
        ALTER TABLE conversations ADD COLUMN kind INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE group_members(conversation_id INTEGER NOT NULL, user_id TEXT NOT NULL, PRIMARY KEY(conversation_id, user_id)) WITHOUT ROWID;
        """,
        // 23: users who accept direct messages only from people they share a server with (a row each).
        """
        CREATE TABLE direct_privacy(user_id TEXT PRIMARY KEY) WITHOUT ROWID;
        """,
        // 24: incoming webhooks (Webhooks.swift; their secrets' hashes), the
        // author of a message one posted, and MANAGE_WEBHOOKS (1 << 21) for the
        // admin role of servers made before it.
        """
        CREATE TABLE webhooks(id INTEGER PRIMARY KEY, server_id INTEGER NOT NULL, channel_id INTEGER NOT NULL, name TEXT NOT NULL,
                              secret_hash TEXT NOT NULL, created_by TEXT NOT NULL, created_at INTEGER NOT NULL);
        CREATE INDEX webhooks_by_server ON webhooks(server_id);
        ALTER TABLE messages ADD COLUMN webhook TEXT NOT NULL DEFAULT '';
        UPDATE roles SET allow = allow | 2097152 WHERE role_id = 1;
        """,
    ]

    static func migrate(_ db: SQLiteConnection) throws(StoreError) {
        let applied = Int(try db.scalar("PRAGMA user_version"))
        guard applied < migrations.count else { return }
        try db.execute("BEGIN IMMEDIATE")
        do {
            for (index, sql) in migrations.enumerated() where index >= applied { try db.execute(sql) }
            try db.execute("PRAGMA user_version = \(migrations.count)")
            try db.execute("COMMIT")
        } catch {
            try? db.execute("ROLLBACK")
            throw error
        }
    }
}
