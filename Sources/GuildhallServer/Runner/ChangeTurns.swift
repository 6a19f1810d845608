// Changes that take turns (docs/architecture.md "State changes on commit"):
// state changes only once a change is durable, so two changes to one thing
// decided before the first committed would both check the old state (two
// joins both admitted, a role given to a member who just left, two edits of
// one message). So the changes to each thing (`ChangeSlot`) take turns: each
// is decided on what the one before left, once that one settled. A change's
// `Effects.turn` names the slot it holds; the runner lets the next one go
// when the change settles, stored or not. What waits is the decision still
// to be made (a closure); what settles is data. Loop thread only.

import GuildhallCore

/// A thing whose changes take turns.
enum ChangeSlot: Hashable {
    /// A server's directory: members, channels, roles, bans (DirectoryRequests.swift).
    case server(ServerID)
    /// A channel's pins (Pinboard.swift).
    case pins(ChannelID)
    /// A user's responses to group read receipts (GroupReceipts.swift).
    case receiptResponses(UserID)
    /// A user's direct-conversation receipts (DirectMessages.swift).
    case directReceipts(UserID)
    /// A group conversation's membership and settings (GroupConversations.swift).
    case group(UInt64)
    /// One message's recalls, edits, deletions and reactions (MessageOperations.swift).
    case message(MessageUID)
}

final class ChangeTurns {
    /// Per slot with a change in flight, the decisions waiting for it.
    private var waiting: [ChangeSlot: [() -> Void]] = [:]

    /// Runs `decide` now if nothing of `slot` is in flight, else after what is;
    /// what it starts ends with `done(slot)` (the runner's, once settled).
    func run(_ slot: ChangeSlot, _ decide: @escaping () -> Void) {
        if waiting[slot] != nil {
            waiting[slot]!.append(decide)
            return
        }
        waiting[slot] = []
        decide()
    }

    /// The change in flight on `slot` settled: the next one is decided.
    func done(_ slot: ChangeSlot) {
        guard var queue = waiting[slot] else { return }
        guard !queue.isEmpty else {
            waiting.removeValue(forKey: slot)
            return
        }
        let next = queue.removeFirst()
        waiting[slot] = queue
        next()
    }
}
