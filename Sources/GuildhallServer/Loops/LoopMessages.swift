// The messages loops exchange (docs/architecture.md, docs/cluster.md): no state is
// shared between loops, so a home reaches a session on another loop, and a
// gateway its home, only through these values, posted to the other loop's
// inbox in batches (one per loop turn). Each loop's inbox keeps the order
// in which one loop posted, so per-session and per-channel order hold.
// A case that is rare and large is `indirect`: an enum is as large as its
// largest case, and these values are copied and gathered in arrays on the
// message path (a `LoopMessage` was 1337 bytes for its settings case, a
// `HomeCommand` 216 for a send's request). Values only.

import Dispatch
import GuildhallCore
import GuildhallLoop
import GuildhallTLS
import GuildhallStore
import GuildhallWire

/// A `SessionPort` call for a session on another loop, as a value (live
/// events go in `GatewayStep.event` runs instead).
enum SessionCommand: Sendable {
    case send(SharedBytes, ord: UInt64)
    case respond([UInt8])
    indirect case part(UInt64, GatherPart)
    indirect case typing(GHChannelTypers)
    case admitted(user: UserID, device: DeviceID, sessionID: String)
    case syncedFrom(UInt64)
    case noteInboxItem(UInt64)
    case packageSent
    case finishSync
    case pause(ReadPauses)
    case resume(ReadPauses)
    case end(GHCloseReason?, String)
    case presence([GHPresence])
}

/// A session another home admitted, for a home that is not its user's:
/// it delivers to it and answers its requests.
struct OpenedSession: Sendable {
    let key: UInt64
    let user: UserID
    let device: DeviceID
    let sessionID: String
    let autoSubscribe: Bool
    /// Its gateway's node's life (`ClusterView.life`).
    let gatewayLife: UInt64
}

/// One command for one session.
struct SessionOrder: Sendable {
    let key: UInt64
    let command: SessionCommand
}

/// One live event's recipient on the gateway's loop, with its own trailer fields.
struct EventRecipient: Sendable {
    let key: UInt64
    let unread: FrameEncoding.RecipientUnread?
    let cursor: UInt64
}

/// What a home sends a gateway, in order: commands, and runs of one event
/// to many of its sessions (a fan-out), the event's bytes referenced once per run.
enum GatewayStep: Sendable {
    case command(SessionOrder)
    case event(SharedBytes, [EventRecipient])
    /// A channel's guild (nil: the channel is gone), for routing requests that name it;
    /// sent before anything that tells a session of it.
    case place(ChannelID, ServerID?)
    /// The gateway's half of the interest changed (GatewayInterest.swift).
    case interest(InterestUpdate)
    /// A message for the gateway's sessions that hold its channel.
    case channelEvent(ChannelEvent)
    /// The home sent again every message of the channel up to the seq that the gateway asked for.
    case replayed(ChannelID, upTo: UInt64)
    /// A webhook post's answer (Webhooks.swift), for the web listener's connection waiting on `token`.
    case webhookAnswered(token: UInt64, status: Int, body: String)
}

/// A `GatewayHome` call from a gateway on another loop, as a value.
enum HomeCommand: Sendable {
    indirect case admit(Admission)
    indirect case opened(OpenedSession)
    indirect case route(GHRequest.OneOf_Body, id: UInt64, key: UInt64, part: Bool)
    indirect case send(SendRequest, id: UInt64, key: UInt64)
    indirect case check(GHRequest.OneOf_Body, gather: UInt64, key: UInt64)
    case tails([ChannelID], user: UserID, gather: UInt64, key: UInt64)
    indirect case grant(GHRequest.OneOf_Body, gather: UInt64, key: UInt64)
    case release(UserID, kind: Int, [SubscriptionTarget])
    case acknowledged(key: UInt64, ackedOrd: UInt64, packageAcked: Bool)
    case ended(UInt64, ackedOrd: UInt64, reconnecting: Bool)
    case received(UInt64, [ChannelID: UInt64])
    case detached(UInt64, since: UInt64)
    case resumed(UInt64)
    case behind(UInt64, Bool)
    /// The gateway missed messages of the channel after one seq and before another: send them again.
    case replay(ChannelID, after: UInt64, before: UInt64)
    /// For publisher pauses: bytes queued on the gateway's sessions and not
    /// yet taken by the kernel, and the bytes of events it has applied so far.
    case outbound(queued: Int, applied: Int)
    /// A post to a webhook's URL, for its channel's home (WebhookDoor.swift).
    indirect case webhookPost(WebhookDelivery)
}

/// A post to a webhook's URL as its door read it; the answer goes back to the door with `token`.
struct WebhookDelivery: Sendable, Equatable {
    let channelID: ChannelID
    let webhookID: UInt64
    let secret: String
    let post: WebhookPost
    let token: UInt64
}

/// A connection moving to the gateway that holds the session it resumes:
/// its socket, what was already read from it, and the resume to carry out there.
struct HandOff: Sendable {
    let socket: Int32
    /// Its TLS, when it speaks TLS, and the client a trusted proxy named.
    let tls: TLSStream?
    let client: String
    let decoder: InboundFrames
    let resume: GHResume
    let id: UInt64
}

/// Everything that reaches a loop from another thread, through its inbox:
/// for its home, for its gateway, and the steps of the node's start and shutdown.
enum LoopMessage: Sendable {
    /// The store committed or read what this loop's home asked for.
    case committed([WriteOutcome])
    case read([ReadResult])
    /// New settings (SIGHUP or the handle); only live ones apply. The group,
    /// if any, is left once they have, here.
    indirect case settings(Settings, DispatchGroup?)
    /// What a gateway (on the loop the index names) told this loop's home.
    case fromGateway(Int, [HomeCommand])
    /// What a home (on the loop the index names) sends this loop's gateway's sessions.
    case fromHome(Int, [GatewayStep])
    /// What another loop's home sends this loop's home (HomeMail.swift).
    case mail(Int, [HomeMail])
    /// In a cluster: this loop's share of shards the node took over (leave
    /// the group once loaded), and shards another node holds now.
    indirect case adoptShards(StoreSnapshot, DispatchGroup)
    case dropShards(Set<Int>)
    /// Shards that moved between other nodes: sessions here whose users' homes were there log in again.
    case homesMoved(Set<Int>)
    /// Shards whose guilds have new homes (gained, lost, or moved between others): sessions here subscribe there again.
    case guildsMoved(Set<Int>)
    /// A connection for this loop's gateway (a resume that arrived on another loop).
    indirect case handOff(HandOff)
    /// A JWT login's token, verified off the loop for a session of this loop's gateway (TokenChecks.swift).
    indirect case tokenChecked(UInt64, TokenChecks.Outcome)
    /// A file worker's report on an upload to this loop's listener (FileDoor.swift).
    indirect case files(UInt64, FileDoor.Outcome)
    /// A file worker's report on a download from this loop's listener (FileDownloads.swift).
    indirect case download(UInt64, FileDownloads.Report)
    /// The file store's answer to a check this loop's home asked for (FileWork.swift).
    indirect case fileWork(UInt64, FileWorkOutcome)
    /// An admin request's answer, made off the loop (AdminEndpoint.swift); first loop only.
    indirect case adminAnswer(UInt64, AdminAnswer)
    /// Shutdown, in the order the first loop leads it (NodeShutdown.swift).
    case shutdown
    case stopAccepting
    case quiet(Int)
    case closeSessions(draining: Bool)
    case gatewayClosed(Int)
    case homeClosed(Int)
    case stop
}
