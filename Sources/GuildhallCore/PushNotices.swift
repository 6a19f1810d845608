// Push (docs/features.md "Push"): a device's registration to be reached
// while its user has no session online, and the notices the push gateway
// gets, as the JSON it reads. A notice is owed for a mention or a direct
// message that reached a user with no session; the user's home batches them
// (PushNotices.swift in the server) and a worker posts them. Pure.

import Foundation

/// A device's push token (`RegisterPushToken`), one per user and device.
public struct PushRegistration: Sendable, Codable, Equatable {
    public var user: UserID
    public var device: DeviceID
    /// The push service the token is for ("apns", "fcm", "webpush", …), as the client says.
    public var platform: String
    public var token: String
    /// Whether notices to this device carry a preview of the message.
    public var previews: Bool
    public var updatedAt: UInt64

    public init(user: UserID, device: DeviceID, platform: String, token: String, previews: Bool, updatedAt: UInt64) {
        self.user = user; self.device = device; self.platform = platform; self.token = token; self.previews = previews; self.updatedAt = updatedAt
    }

    public static let maxTokenBytes = 4096, maxPlatformBytes = 32

    /// Why a registration may not be kept, or nil.
    public var problem: String? {
        if token.isEmpty { return "token must not be empty" }
        if token.utf8.count > Self.maxTokenBytes { return "token has \(token.utf8.count) bytes; at most \(Self.maxTokenBytes)" }
        if platform.utf8.count > Self.maxPlatformBytes { return "platform has \(platform.utf8.count) bytes; at most \(Self.maxPlatformBytes)" }
        if (token + platform).unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            return "token and platform must not contain control characters"
        }
        return nil
    }
}

/// One notice for the push gateway: a message that reached a user with no session online.
public struct PushNotice: Sendable, Codable, Equatable {
    public struct Device: Sendable, Codable, Equatable {
        public var deviceID: DeviceID
        public var platform: String
        public var token: String
        /// The start of the message, or "" for a device that chose no previews.
        public var preview: String

        enum CodingKeys: String, CodingKey {
            case deviceID = "device_id", platform, token, preview
        }
    }

    public var user: UserID
    /// "direct" or "mention".
    public var kind: String
    /// Ids as strings, as the wire's JSON writes 64-bit numbers.
    public var messageUID: String
    public var serverID: String
    public var channelID: String
    public var sender: UserID
    public var title: String
    /// Mentions and direct messages the user was sent since last online.
    public var unread: UInt64
    public var devices: [Device]

    enum CodingKeys: String, CodingKey {
        case user = "user_id", kind, messageUID = "message_uid", serverID = "server_id", channelID = "channel_id"
        case sender = "sender_id", title, unread, devices
    }

    /// The longest preview, in characters.
    public static let previewCharacters = 140

    /// The notice of message `m` for `user`'s `devices`; `senderName`: how the sender shows ("" for their id).
    public init(_ m: MessageRecord, for user: UserID, devices: [PushRegistration], senderName: String, unread: UInt64) {
        let text: String = if case .text(let t) = m.content { t } else { "" }
        self.init(uid: m.uid, serverID: m.serverID, channelID: m.channelID, sender: m.sender, text: text,
                  for: user, devices: devices, senderName: senderName, unread: unread)
    }

    /// The notice of a message known by its parts (`text`: "" for custom content).
    public init(uid: MessageUID, serverID: ServerID, channelID: ChannelID, sender: UserID, text: String,
                for user: UserID, devices: [PushRegistration], senderName: String, unread: UInt64) {
        self.user = user
        kind = serverID == 0 ? "direct" : "mention"
        messageUID = String(uid)
        self.serverID = String(serverID)
        self.channelID = String(channelID)
        self.sender = sender
        title = senderName.isEmpty ? sender : senderName
        self.unread = unread
        let preview = String(text.prefix(Self.previewCharacters))
        self.devices = devices.sorted { $0.device < $1.device }.map {
            Device(deviceID: $0.device, platform: $0.platform, token: $0.token, preview: $0.previews ? preview : "")
        }
    }
}

/// A batch as the push gateway gets it.
public struct PushBatch: Sendable, Codable, Equatable {
    public var notifications: [PushNotice]
    /// When it was made (milliseconds since 1970).
    public var sentAt: UInt64

    enum CodingKeys: String, CodingKey {
        case notifications, sentAt = "sent_at"
    }

    public init(notifications: [PushNotice], sentAt: UInt64) { self.notifications = notifications; self.sentAt = sentAt }

    public var json: [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return [UInt8]((try? encoder.encode(self)) ?? Data("{}".utf8))
    }
}
