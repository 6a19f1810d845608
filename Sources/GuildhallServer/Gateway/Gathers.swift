// Requests every home answers in part (a list of the user's servers, a
// search over every home's channels), waiting at a gateway until every part
// is in: the gateway's `HomeRoutes` starts one, hands each part here and
// merges the parts once the last arrives. Values only; gateway loop only.

/// A request every home answers in part.
struct Gather {
    let session: UInt64
    /// The client's id for the request.
    let id: UInt64
    let merge: GatherMerge
    let expected: Int
    var parts: [GatherPart] = []
    /// Loop time it was sent (in a cluster, a node may die before it answers).
    var started: UInt64 = 0
}

struct Gathers {
    /// By the id the homes see, until all parts are in.
    private var waiting: [UInt64: Gather] = [:]
    /// A home answers a gathered request's part under the gather's id, and
    /// a session's own requests under the client's id, both on the same
    /// session: gather ids start at 2^62, far from the ids clients count
    /// from 1 (and from the SDK's fixed ids near the top), so a part never
    /// takes a request's answer, nor a request a part's.
    private var nextID: UInt64 = 1 << 62

    /// Waits for `g`'s parts; returns the id its parts come under.
    mutating func start(_ g: Gather) -> UInt64 {
        nextID += 1
        waiting[nextID] = g
        return nextID
    }

    /// A part of gather `id`: the gather once it is whole (it waits no more), else nil.
    mutating func arrived(_ id: UInt64, _ part: GatherPart) -> Gather? {
        guard var g = waiting[id] else { return nil }
        g.parts.append(part)
        guard g.parts.count == g.expected else {
            waiting[id] = g
            return nil
        }
        waiting.removeValue(forKey: id)
        return g
    }

    /// Gathers still short of parts after `timeoutMs` (a node died or left
    /// meanwhile), which wait no more: each is answered UNAVAILABLE, since a
    /// merge without every home's part would be wrong.
    mutating func expired(now: UInt64, timeoutMs: UInt64 = 5_000) -> [Gather] {
        let late = waiting.filter { now >= $0.value.started + timeoutMs }
        for id in late.keys { waiting.removeValue(forKey: id) }
        return Array(late.values)
    }

    /// A part arrived for a session that is gone: nobody waits for the answer.
    mutating func forget(_ id: UInt64) { waiting.removeValue(forKey: id) }
}
