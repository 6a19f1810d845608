// What a client missed when its resume falls back to a login and the
// server no longer holds the session (a restart, a dead node, the resume
// window passed): the client says up to which seq it got each channel
// (`Resume.channels`), the gateway asks the channels' homes for their
// newest seqs (only channels the user may still read answer), and the
// login answer names every newer range (`LoginResult.missed`) beside what
// the old session, if still here, knew it had sent. The SDK fetches them
// from history before the channels' live messages (docs/reliability.md).
// Gateway side; loop thread only.

import GuildhallCore
import GuildhallWire

/// A resume that falls back to a login, waiting for its channels' tails.
struct ResumeFallback {
    /// The most channels a resume may name; more are left out.
    static let maxChannels = 1000

    let token: AccessToken
    let autoSubscribe: Bool
    let id: UInt64
    let failure: String
    var missed: MissedMessages
    /// (channel, the highest seq the client got), in the client's order.
    let asked: [(ChannelID, UInt64)]
}

extension HomeRoutes {
    /// Asks the homes of `f`'s channels for their newest seqs, then logs the session in.
    func askTails(_ f: ResumeFallback, for s: Session) {
        var byPlace: [Int: [ChannelID]] = [:]
        for (channel, _) in f.asked {
            guard let h = alone ? 0 : placeIfKnown(ofChannel: channel) else { continue }
            byPlace[h, default: []].append(channel)
        }
        guard !byPlace.isEmpty else { return gateway.admit(s, f) }
        s.forwarded(bytes: 0)
        let gid = newGather(.tailsFirst(f), expecting: byPlace.count, id: f.id, from: s)
        for (h, channels) in byPlace { home(h).channelTails(channels, of: f.token.user, gather: gid, session: s.key) }
    }

    /// The tails arrived: each channel with messages past what the client got is missed.
    func resumeFallback(_ f: ResumeFallback, on s: Session, tails: GHResponse.OneOf_Result) {
        var f = f
        if case .unreads(let list) = tails {
            let got = Dictionary(f.asked, uniquingKeysWith: max)
            for info in list.unreads {
                guard let seq = got[info.channelID], info.lastSeq > seq else { continue }
                f.missed.note(server: info.serverID, channel: info.channelID, seq: seq + 1)
                f.missed.note(server: info.serverID, channel: info.channelID, seq: info.lastSeq)
            }
        }
        gateway.admit(s, f)
    }
}

extension Gateway {
    func admit(_ s: Session, _ f: ResumeFallback) {
        admit(s, f.token, autoSubscribe: f.autoSubscribe, id: f.id, resumeFailure: f.failure, missed: f.missed)
    }
}
