// Field numbers of guildhall.proto that the hand-written encoders and readers
// use (ProtoFields, MessageWire, EventTrailer). The generated code keeps its
// own; these exist so no other file writes a bare tag, and a test checks
// each against the generated encoder's bytes. Pure constants.

public enum WireField {
    public enum Frame { public static let request = 1, response = 2, event = 3 }
    public enum Request { public static let id = 1, ack = 13, sendMessage = 50 }
    public enum Response { public static let id = 1, ok = 3, message = 50 }
    public enum Ack { public static let eventSeq = 1 }
    public enum Event {
        public static let seq = 1, unread = 2, cursor = 6, message = 10, messageUpdate = 22
        /// The field numbers of the event's oneof body (all messages; a test checks them against Proto/).
        public static let bodies = 10...24
    }
    public enum UnreadInfo {
        public static let serverID = 1, channelID = 2, unreadCount = 3, maxCount = 4, mentionedCount = 5,
                          ackTimestamp = 6, lastMsgTime = 7, lastSeq = 8, readSeq = 9
    }
    public enum ChannelMessage {
        public static let uid = 1, serverID = 2, channelID = 3, seq = 4, senderID = 5, sentTime = 6, body = 7,
                          mentions = 8, mentionAll = 9, needReceipt = 10, clientID = 11, receipt = 12
    }
    public enum MessageBody { public static let text = 1, custom = 2 }
    public enum CustomBody { public static let type = 1, data = 2 }
    public enum ReceiptInfo { public static let messageUID = 1, requested = 2 }
    public enum SendMessage {
        public static let channelID = 1, body = 2, mentions = 3, mentionAll = 4, needReceipt = 5, clientID = 6
    }
}
