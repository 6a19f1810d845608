// What is kept for offline sync (docs/features.md): the per-user inbox of items
// addressed to the user, each device's sync cursor into it, and the
// per-user received status of messages. Value types shared by the loop,
// the writer and the reader.

import GuildhallCore

/// One item addressed to a user. `ord` orders the inbox of every user (the
/// loop hands them out, increasing); a device has synced up to its cursor.
public struct InboxRow: Sendable, Codable, Equatable {
    public let ord: UInt64
    public let user: UserID
    /// When the item was written (loop clock), for retention.
    public let at: UInt64
    /// A message addressed to the user (a mention), read from `messages`; 0 when `event` holds the item.
    public let messageUID: MessageUID
    /// Otherwise the item as a serialized `guildhall.v1.Event` body (no seq).
    public let event: [UInt8]

    public init(ord: UInt64, user: UserID, at: UInt64, messageUID: MessageUID = 0, event: [UInt8] = []) {
        self.ord = ord; self.user = user; self.at = at; self.messageUID = messageUID; self.event = event
    }
}

/// An inbox row as read back for a sync package.
public struct InboxItem: Sendable, Codable {
    public let ord: UInt64
    /// The message, for a message row whose message still exists.
    public let message: MessageRecord?
    /// The serialized event, for other rows.
    public let event: [UInt8]

    public init(ord: UInt64, message: MessageRecord?, event: [UInt8]) {
        self.ord = ord; self.message = message; self.event = event
    }
}

/// Received-status flags of one message for one user (bits only turn on).
public struct ReceivedFlags: OptionSet, Sendable, Codable, Hashable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    public static let read = ReceivedFlags(rawValue: 1)
    public static let listened = ReceivedFlags(rawValue: 2)
    public static let downloaded = ReceivedFlags(rawValue: 4)
    public static let retrieved = ReceivedFlags(rawValue: 8)
}
