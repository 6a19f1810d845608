// What follows a change once its answer, items and notices are out, or once
// its commit failed (`Effects.followUps`), as data: each case says what it
// is, and `Home.followUp` hands it to the part that owns the state
// (docs/architecture.md). Loop thread only.

import GuildhallCore

enum FollowUp {
    /// Files the change named were claimed while it committed (an icon, an
    /// avatar): stored or not, they may be named again (and are refused by their rows if stored).
    case filesClaimed([UInt64])
    /// Stored: the server's guests are checked again against what guests may view now.
    case guestsRecheck(ServerID)
    /// Stored: a deleted channel's subscriptions and pins go, once its subscribers heard of it.
    case channelGone(ChannelID)
    /// Stored: the server's channels changed; auto-mode subscriptions follow.
    case channelsChanged(ServerID)
    /// Stored: the user's profile changed; every home is told.
    indirect case profileChanged(UserProfile)
    /// Stored: a message operation is counted; a removed message's files stop working.
    indirect case messageOperated(removedFiles: [FileAttachment])
    /// The lifting of an ended ban settled: stored, it is logged; not, the next sweep tries again.
    indirect case banLifted(BanRecord)
}

extension Home {
    /// Carries out a follow-up of a change that was `stored`, or whose commit failed (`EffectRunner`).
    func followUp(_ f: FollowUp, stored: Bool) {
        switch f {
        case .filesClaimed(let ids): attachments.release(ids)
        case .banLifted(let b): moderation.lifted(b, stored: stored)
        // The rest follow only a stored change.
        case .guestsRecheck(let server): if stored { directoryRequests.guestsRecheck(server) }
        case .channelGone(let channel):
            guard stored else { return }
            book.dropChannel(channel)
            pinboard.forget(channel: channel)
        case .channelsChanged(let server): if stored { subscriptions.channelsChanged(in: server) }
        case .profileChanged(let p): if stored { profiles.tell([p], changed: true) }
        case .messageOperated(let files):
            guard stored else { return }
            metrics.operations.increment()
            attachments.forget(files)
        }
    }
}
