// What one home sends another (docs/architecture.md): no state is shared, so items
// addressed to a user homed elsewhere, and offline-sync items that need a
// guild's state, travel as these values between loops. Values only.
//
// Filing: a home that committed a change with items for users homed
// elsewhere mails each such home the items; that home writes them to the
// users' inboxes with its own ords (a user's ords come from one home, so
// they only grow), delivers them live, and answers `filed` once durable.
// The sender answers its request, and carries out everything after it in
// order, only then: durable before acknowledged holds for the items too.
// A mentioned user's live copy is the message's fan-out from the guild's
// home, which knows no ord for it; the user home only notes the ord.
//
// Dressing: offline sync reads the user's inbox at the user's home, but
// whether a message item still applies (is the user still a member?) and
// how it looks (receipts, current unread numbers) is the guild home's to say.

import GuildhallCore
import GuildhallLoop
import GuildhallStore
import GuildhallWire

enum HomeMail: Sendable {
    /// Items for users the receiving home holds; answer `filed(token)` once they are durable.
    case file([MailedItem], token: UInt64)
    case filed(token: UInt64)
    /// Offline-sync items of `user` that need the receiving home's guild state.
    case dress(user: UserID, items: [InboxItem], token: UInt64)
    /// The events they become, in order (nil: the item no longer applies).
    case dressed(token: UInt64, events: [GHEvent?])
    /// Auto-subscribe mode (AutoSubscribe.swift): a guild home's channels of
    /// the user, activity in one, and the levels the user's home gives them.
    case autoChannels(user: UserID, [AutoChannel])
    case autoTouch(user: UserID, channel: ChannelID, activity: UInt64)
    case autoLevels(user: UserID, [ChannelID: ChannelLevel?], uncovered: Int)
    /// Users' tallies of targets that went 0 -> 1 -> 0 here, for their homes' limits (SubscriptionGrants.swift).
    case subscriptionTallies([TallyChange])
    /// Flags reading or delivery set, for the user's other sessions (ReceivedRanges.swift).
    case receivedRange(user: UserID, GHReceivedRange, except: UInt64)
    /// Users' presence as their homes decided it, for every home (Presences.swift).
    case presence([GHPresence])
    /// The current presence of `users` (homed at the receiving home), for session `session`.
    case presenceAsked(users: [UserID], session: UInt64)
    /// Users' profiles from their homes (Profiles.swift): a change (`changed`), or a reminder that only fixes copies.
    case profiles([UserProfile], changed: Bool)
    /// The profiles of `users` (homed at the receiving home), for the asking home's member copies.
    case profilesAsked(users: [UserID])
    /// May `from` write to `to`? Every home answers its part (DirectPrivacy.swift).
    case directCheck(token: UInt64, from: UserID, to: [UserID])
    case directChecked(token: UInt64, [DirectVerdict])
    /// `user` changed whom they accept direct messages from: answers kept about them are stale.
    case directPrivacyChanged(UserID)
}

/// An item addressed to a user homed at another loop.
struct MailedItem: Sendable {
    enum Stored: Sendable {
        case event([UInt8])
        case message(MessageUID)
    }

    enum Live: Sendable {
        case push(SharedBytes)
        case pushExceptOrigin(SharedBytes, origin: UInt64)
        case noted
    }

    let user: UserID
    let stored: Stored
    let live: Live
    /// A message (mention or direct message) carried as its event: owed a push
    /// notice like a `.message` item when the user has no session online.
    let owesPush: Bool

    init(user: UserID, stored: Stored, live: Live, owesPush: Bool = false) {
        self.user = user
        self.stored = stored
        self.live = live
        self.owesPush = owesPush
    }

    /// `message`: for a user homed on another node, whose store does not hold
    /// the guild's messages, a message item travels as the message itself (a
    /// stored event), as it was when sent (its files' links made then, `links` at `now`).
    init(_ item: AddressedItem, message: MessageRecord? = nil, links: @autoclosure () -> AttachmentLinks? = nil, now: UInt64 = 0) {
        user = item.user
        var owesPush = item.pushOwed != 0
        switch item.stored {
        case .event(let copy): stored = .event(copy.stored)
        case .message(let uid):
            if let message, message.uid == uid {
                owesPush = true
                var e = GHEvent()
                e.message = GHChannelMessage(message)
                if !message.attachments.isEmpty, let links = links() {
                    e.message.attachments = links.shown(message.attachments, to: item.user, now: now)
                }
                if message.serverID == 0 { e.message.recipientID = item.user }
                stored = .event((try? e.serializedBytes()) ?? [])
            } else {
                stored = .message(uid)
            }
        }
        self.owesPush = owesPush
        switch item.live {
        case .push(let copy): live = .push(copy.payload)
        case .pushExceptOrigin(let copy, let origin): live = .pushExceptOrigin(copy.payload, origin: origin)
        case .noted, .elsewhere: live = .noted
        }
    }
}
