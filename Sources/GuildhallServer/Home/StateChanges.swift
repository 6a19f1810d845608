// Where the state changes handlers return as data (`StateChange`) meet the
// parts that own the state: the runner calls `apply` once a change's writes
// are durable, `drop` when their commit failed (docs/architecture.md). One
// case per change; each part's own function does the work. Loop thread only.

extension Home {
    /// Applies a handler's state changes once their writes are durable
    /// (`EffectRunner`), in order; a run's sends together (`messagesSent`).
    func apply(_ changes: [StateChange], ords: [UInt64]) {
        if changes.count > 1, case .messageSent = changes[0] {
            messagesSent(changes, ords: ords)
            return
        }
        // By index: each change is handed on borrowed, not copied out of the array.
        for i in changes.indices { apply(changes[i], ords: ords) }
    }

    /// Applies one state change once its writes are durable.
    func apply(_ change: StateChange, ords: [UInt64]) {
        switch change {
        case .messageSent(let m): messageSent(m, ords: ords)
        case .directMessageSent(let m): userHome.directMessageSent(m)
        case .messageChanged(let c): messageOperations.changed(c, ords: ords)
        case .directory(let changes):
            let followOns = DirectoryFollowOn.of(changes, before: directory)
            directory.apply(changes)
            memberLists.applied(changes)
            webhooks.applied(changes)
            follow(followOns)
        case .webhookSaved(let w): webhooks.saved(w)
        case .webhookDeleted(let w): webhooks.deleted(w)
        case .pinned(let pin): pinboard.pinned(pin)
        case .unpinned(let channel, let uid): pinboard.unpinned(uid, in: channel)
        case .pushRegistered(let r): pushNotices.registered(r)
        case .pushUnregistered(let user, let device): pushNotices.unregistered(user, device)
        case .blockSet(let blocker, let blocked, let blocks): userHome.directs.setBlock(blocker, blocked, blocks)
        case .profileSaved(let p): profiles.saved(p)
        case .conversationStored(let id): userHome.directs[id]?.stored = true
        case .directReceipts(let sides, let reader, let origin): userHome.receiptsTaken(sides, reader: reader, origin: origin)
        case .groupChanged(let after, let change): userHome.groupChanged(after, change)
        case .presenceChosen(let user, let choice): presences.chosen(user, choice)
        case .directPrivacySet(let user, let only): directPrivacy.chosen(user, serverMatesOnly: only)
        case .readMarked(let user, let channel, let seq, let time, let origin): reading.marked(user, channel, upTo: seq, now: time, origin: origin)
        case .receiptRequested(let plan, let uid): groupReceipts.requested(plan, uid: uid)
        case .receiptsAdvanced(let channel, let advance, let owed): groupReceipts.advanced(advance, in: channel, owed: owed, ords: ords)
        }
    }

    /// A state change whose writes failed: what it reserved is let go.
    func drop(_ change: StateChange) {
        switch change {
        case .messageSent(let m): messageNotSent(m)
        case .directMessageSent(let m): userHome.directMessageNotSent(m)
        // Nothing was reserved: each of these changes memory only on commit.
        case .receiptRequested(_, let uid): groupReceipts.notRequested(uid)
        case .messageChanged, .directory, .webhookSaved, .webhookDeleted, .pinned, .unpinned, .pushRegistered, .pushUnregistered, .blockSet, .profileSaved,
             .conversationStored, .directReceipts, .groupChanged, .presenceChosen, .directPrivacySet, .readMarked, .receiptsAdvanced: break
        }
    }
}
