// What a request handler decided, as values the runner carries out
// (docs/architecture.md): the store writes, items addressed to users, the answer, and
// what happens once the writes are durable. A handler checks and decides;
// it never commits, answers after a commit, or touches the inbox itself.
// All of it is data: the state changes (`StateChange`), the notifications
// (`Notice`), the answer (`Reply`), what follows the commit either way
// (`FollowUp`) and the turn the change holds (`ChangeSlot`). Loop thread only.

import GuildhallCore
import GuildhallStore
import GuildhallLoop
import GuildhallWire

struct Effects {
    /// Durable changes; everything below waits until they (and the
    /// addressed items' inbox rows) have committed together.
    var writes: [StoreWrite] = []
    /// Items addressed to users (docs/features.md): each becomes a row in the
    /// user's inbox, committed with `writes`, then reaches the user's online
    /// sessions with its inbox cursor.
    var addressed: [AddressedItem] = []
    /// The answer, sent once the commit succeeded and `changes` are applied
    /// (what it reads sees them). Nil when a change answers itself (a send).
    var reply: Reply?
    /// What follows once the answer, the items and the notices are out, or
    /// once the 503 is: the home carries each out knowing which (FollowUps.swift).
    var followUps: [FollowUp] = []
    /// The slot whose turn this change holds: the next change there is decided once this one settled (ChangeTurns.swift).
    var turn: ChangeSlot?
    /// The 503's message when the commit fails.
    var failure = Effects.storageFailure
    static let storageFailure = "storage is unavailable; the change was not saved, retry later"
    /// State changes as data, applied by the home once durable (with the
    /// inbox ord of each addressed item, in order), or let go when the commit fails.
    var changes: [StateChange] = []
    /// System notifications of the change: their targeted users' copies commit
    /// with it; their audiences hear them after the addressed items, before the follow-ups.
    var notices: [Notice] = []
    /// Events for sessions that keep no inbox copy of them (the actor's other
    /// devices), told once durable, after the notices.
    var deliveries: [Delivery] = []

    init(writes: [StoreWrite] = [], addressed: [AddressedItem] = [], reply: Reply? = nil, followUps: [FollowUp] = []) {
        self.writes = writes
        self.addressed = addressed
        self.reply = reply
        self.followUps = followUps
    }
}

/// A request's answer as its handler decides it: the result itself, or what
/// to read once the change is applied (read-your-writes; Answers.swift reads it).
/// Boxed: either case is some 200 bytes, and every `Effects` (a send's too, which
/// has no reply) was that much larger to copy.
indirect enum Reply {
    case result(GHResponse.OneOf_Result)
    case read(AnswerRead)

    static let ok = Reply.result(.ok(GHOk()))
}

/// What an answer reads once its change is applied: state the change (or a
/// change committing beside it) moves, so it is not known when decided.
enum AnswerRead {
    /// The server with its member count (a new server's first member is its owner).
    case server(ServerRecord)
    /// A member as the wire shows them, with their timeout.
    case member(UserID, of: ServerID)
    /// The channel as the directory holds it (its last message moves while the change commits).
    case channel(ChannelRecord)
    /// What others see of the user.
    case presence(UserID)
    /// The user's unread numbers in the channel.
    case unread(UserID, ChannelRecord, now: UInt64)
    /// The conversation as the user sees it.
    case conversation(DirectConversation, for: UserID)
    /// An invite code with its server's name and member count.
    case inviteCode(InviteCode)
    /// Group receipt infos of messages as the user sees them (counts other readers' responses committing meanwhile).
    case receipts([MessageUID], for: UserID)
}

/// An event for some sessions, told once its change is durable.
struct Delivery {
    enum Audience {
        /// Every session of the user but the one that made the change.
        case otherSessions(of: UserID, except: SessionKey)
    }

    let audience: Audience
    let event: EventCopy

    init(_ audience: Audience, _ event: EventCopy) {
        self.audience = audience
        self.event = event
    }
}

extension Effects {
    /// Only a notice: of something that changed no stored state (a guest entering or leaving).
    static func telling(_ notice: Notice) -> Effects {
        var e = Effects()
        e.notices = [notice]
        return e
    }
}

extension Sequence<HomeSession> {
    /// A notification for exactly these sessions (auto-mode subscription changes, a profile's hearers).
    func push(_ n: GHSystemNotification) {
        let payload = GHEvent.OneOf_Body.notification(n).sharedPayload
        for s in self { s.push(event: payload) }
    }
}

/// One item addressed to one user.
struct AddressedItem {
    /// What the inbox keeps for offline sync.
    enum Stored {
        case event(EventCopy)
        /// A stored message (mentions, direct messages), read back by UID.
        case message(MessageUID)
    }

    /// How the user's online sessions hear of it once committed.
    enum Live {
        /// Every session gets the event with the item's cursor.
        case push(EventCopy)
        /// Every session but `origin` gets it; the origin caused it and only notes the ord.
        case pushExceptOrigin(EventCopy, origin: SessionKey)
        /// No event; the sessions note the ord (they learn of it another way, or need not).
        case noted
        /// Someone else sends it with the ord its state change is given (a message's
        /// fan-out, coalesced receipt responses).
        case elsewhere
    }

    let user: UserID
    let stored: Stored
    let live: Live
    /// A message kept as its event (a group conversation's) that owes the
    /// user a push notice, as a `.message` item does, when no session of theirs is online; 0: none.
    var pushOwed: MessageUID = 0

    /// An event addressed to `user` that all of the user's sessions get.
    static func event(_ copy: EventCopy, to user: UserID) -> AddressedItem {
        AddressedItem(user: user, stored: .event(copy), live: .push(copy))
    }
}

/// One event body, encoded at most once for the inbox (a stored Event) and
/// once for the wire (the shared payload every recipient's trailer merges
/// into), however many users it is addressed to.
final class EventCopy {
    let body: GHEvent.OneOf_Body
    private var storedBytes: [UInt8]?
    private var shared: SharedBytes?

    init(_ body: GHEvent.OneOf_Body) { self.body = body }

    var stored: [UInt8] {
        if let storedBytes { return storedBytes }
        let bytes = EventEncoding.stored(body)
        storedBytes = bytes
        return bytes
    }

    var payload: SharedBytes {
        if let shared { return shared }
        let bytes = EventEncoding.shared(body)
        shared = bytes
        return bytes
    }
}

/// The ways an event body becomes bytes; every event the server sends or keeps goes through here (or `MessageWire`).
enum EventEncoding {
    /// Frame{event{body}} without a seq: the payload every recipient shares.
    static func shared(_ body: GHEvent.OneOf_Body) -> SharedBytes {
        var frame = GHFrame()
        frame.event.body = body
        return SharedBytes(FrameEncoding.payload(frame))
    }

    /// Event{body} as the inbox keeps it.
    static func stored(_ body: GHEvent.OneOf_Body) -> [UInt8] {
        var e = GHEvent()
        e.body = body
        return (try? e.serializedBytes()) ?? []
    }

    /// Frame{event} of a whole event (offline sync items with their package fields).
    static func shared(_ event: GHEvent) -> SharedBytes {
        var frame = GHFrame()
        frame.event = event
        return SharedBytes(FrameEncoding.payload(frame))
    }
}

extension GHEvent.OneOf_Body {
    /// The shared payload of an event: Frame{event{body}} without a seq.
    var sharedPayload: SharedBytes { EventEncoding.shared(self) }
}

/// A state change a handler returns as a value: the runner hands it to the
/// home's `apply` once the writes committed, or to its `drop` when they did not.
/// Cases carrying records are `indirect`: the enum is as large as its
/// largest inline case, and every change handed on is copied at that size
/// (a send's, a pointer, had been copied at the size of a profile).
enum StateChange {
    /// A channel message was stored: what its commit settles (MessageRequests.swift).
    case messageSent(SentMessage)
    /// A direct or group conversation's message was stored (DirectMessages.swift).
    indirect case directMessageSent(SentDirectMessage)
    /// A sent message was recalled, deleted, edited or reacted to (MessageOperations.swift).
    indirect case messageChanged(ChangedMessage)
    /// Servers, members, channels, roles or bans changed (DirectoryCommits.swift):
    /// the Directory takes the changes, then the parts that mirror it.
    case directory([DirectoryChange])
    /// A channel's webhook was made, or deleted (Webhooks.swift).
    indirect case webhookSaved(WebhookRecord)
    indirect case webhookDeleted(WebhookRecord)
    /// A message was pinned in its channel, or unpinned (Pinboard.swift).
    indirect case pinned(PinRecord)
    case unpinned(ChannelID, MessageUID)
    /// A device's push token was registered, or let go (PushNotices.swift).
    indirect case pushRegistered(PushRegistration)
    case pushUnregistered(UserID, DeviceID)
    /// `blocker` blocked `blocked`, or no longer does (Blocking.swift).
    case blockSet(blocker: UserID, blocked: UserID, blocks: Bool)
    /// A user's profile changed (Profiles.swift).
    indirect case profileSaved(UserProfile)
    /// A direct conversation opened in memory is now stored (DirectMessages.swift).
    case conversationStored(UInt64)
    /// A direct conversation's sides took new receipts from `reader` on session `origin` (DirectMessages.swift).
    case directReceipts([UserHome.DecidedSide], reader: UserID, origin: SessionKey)
    /// A user chose how they show (Presences.swift).
    indirect case presenceChosen(UserID, PresenceChoice)
    /// Whom a user accepts direct messages from (DirectPrivacy.swift).
    case directPrivacySet(UserID, serverMatesOnly: Bool)
    /// A session (`origin`) marked a channel read up to `seq` at `time` (Unread.swift).
    case readMarked(UserID, ChannelID, seq: UInt64, time: UInt64, origin: SessionKey)
    /// A group conversation was made or changed (GroupConversations.swift).
    indirect case groupChanged(DirectConversation, GroupChange)
    /// A group receipt was asked for at a message (GroupReceipts.swift); let go when not stored.
    indirect case receiptRequested(ReceiptRequestPlan, uid: MessageUID)
    /// A member read up to `advance` in a channel; each requester of a covered
    /// message is owed its responses, with the inbox ord of its item (GroupReceipts.swift).
    indirect case receiptsAdvanced(ChannelID, ChannelReceipts.Advance, owed: [(UserID, [GHReceiptResponse])])
}
