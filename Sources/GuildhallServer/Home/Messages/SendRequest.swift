// A channel send as the server handles it: read straight from the frame's
// bytes by `MessageWire.readSend` when the frame is a plain send (the hot
// path), or mapped from the generated message otherwise. Also the domain's
// message as the wire's hand-written encoder takes it. Pure; no state.

import GuildhallCore
import GuildhallWire

struct SendRequest {
    var channelID: ChannelID = 0
    /// nil when the body holds no content (a 400 later).
    var content: MessageContent?
    var mentions: [UserID] = []
    var mentionAll = false
    var needReceipt = false
    var clientID = ""
    var replyTo: MessageUID = 0
    var threadRoot: MessageUID = 0
    /// What `replyTo` and `threadRoot` were found to be (`MessageOperations.references`), once read.
    var references: References?
    /// The UID its gateway minted when forwarding it to another node (0: the home mints it).
    var uid: MessageUID = 0
    /// Sent again after its guild's home changed hands: the UID may be stored already (ForwardedSends.swift).
    var retried = false
    /// The files it names, and what they were found to be (`Attachments.resolve`, which claimed them), once checked.
    var attachmentIDs: [UInt64] = []
    var files: [FileAttachment]?
    /// Posted through a webhook (Webhooks.swift): who it shows as. Its sender is no member, and needs no permission.
    var webhook: WebhookAuthor?
}

/// A reply's quote and the thread a message joins, checked against the stored messages.
struct References {
    var reply: ReplyRef?
    var threadRoot: MessageUID = 0
}

extension SendRequest {
    /// The request table's bit for a send, all a plain send needs (read once: a row is built anew each time).
    static let plainNeeds = GHRequest.OneOf_Body.sendMessage(GHSendMessage()).rule.needs

    /// The request table's bit for a send, and those its content asks for.
    var permissionsNeeded: Permission {
        var p = Self.plainNeeds
        if !mentions.isEmpty { p.insert(.mention) }
        if mentionAll { p.insert(.mentionEveryone) }
        if needReceipt { p.insert(.requestReceipts) }
        if !attachmentIDs.isEmpty { p.insert(.attachFiles) }
        return p
    }

    init(_ r: GHSendMessage) {
        channelID = r.channelID
        attachmentIDs = r.attachments
        // A message with files may have no text.
        content = !r.attachments.isEmpty && r.body == GHMessageBody() ? .text("") : try? r.body.domain()
        mentions = r.mentions
        mentionAll = r.mentionAll
        needReceipt = r.needReceipt
        clientID = r.clientID
        replyTo = r.replyTo
        threadRoot = r.threadRoot
    }

    init(_ p: PlainSend) {
        channelID = p.channelID
        content = p.body.map(MessageContent.init)
        mentions = p.mentions
        mentionAll = p.mentionAll
        needReceipt = p.needReceipt
        clientID = p.clientID
    }

    /// The request id and send of a plain send frame; nil for anything else (see `MessageWire.readSend`).
    static func read(_ payload: [UInt8]) -> (id: UInt64, send: SendRequest)? {
        MessageWire.readSend(payload).map { ($0.id, SendRequest($0.send)) }
    }
}

extension MessageContent {
    init(_ b: WireBody) {
        switch b {
        case .text(let t): self = .text(t)
        case .custom(let type, let data): self = .custom(type: type, data: data)
        }
    }

    var wire: WireBody {
        switch self {
        case .text(let t): .text(t)
        case .custom(let type, let data): .custom(type: type, data: data)
        }
    }
}

extension MessageRecord {
    /// The committed message's ChannelMessage bytes, for its answer and live event.
    var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    /// `encoded`, written over `out`: in its storage when that is unshared and
    /// large enough, so a home encoding each send into the same array allocates
    /// nothing per message (a new array was a tenth of the encoding at C).
    func encode(into out: inout [UInt8]) {
        // Replies and thread messages carry fields the hand-written encoder leaves to the generated one.
        if reply != nil || threadRoot != 0 || changes != MessageChanges() || webhook != nil {
            out = (try? GHChannelMessage(self).serializedBytes()) ?? []
            return
        }
        MessageWire.channelMessage(WireMessage(uid: uid, serverID: serverID, channelID: channelID, seq: seq, senderID: sender,
                                               sentTime: sentTime, body: content.wire, mentions: mentions, mentionAll: mentionAll,
                                               needReceipt: needReceipt, clientID: clientID), into: &out)
    }

    /// As `encoded`, with its files as `reader` is shown them (an answer).
    func encoded(for reader: UserID, _ home: Home) -> [UInt8] {
        attachments.isEmpty ? encoded : (try? home.services.withFiles(GHChannelMessage(self), self, to: reader).serializedBytes()) ?? []
    }
}

/// A send and the request id it answers, as a gateway hands a run of them to a home (SendRun.swift).
struct PendingSend {
    var request: SendRequest
    let id: UInt64
}

extension SendRequest {
    /// Whether the send needs nothing but the channel's plain send checks:
    /// no mentions, receipts, files, references, client id or webhook, and
    /// not a retry. A run of such sends is checked once (`Home.sendRun`).
    var isPlain: Bool {
        clientID.isEmpty && mentions.isEmpty && !mentionAll && !needReceipt && replyTo == 0 && threadRoot == 0 && references == nil
            && attachmentIDs.isEmpty && files == nil && webhook == nil && !retried
    }
}
