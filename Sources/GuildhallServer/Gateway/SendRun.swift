// Sends a session made one after another to one channel, read from one
// drain of its frames (Connections.drainFrames): they go to the channel's
// home together, which decides what depends only on the sender and the
// channel once for all of them, and commits them as one job (`Home.sendRun`).
// A pipelining client writes dozens of sends at a time; each still has its
// own rate check, validation, seq, row and answer (a 503 too, when the job
// fails). A value, no I/O.

import GuildhallCore

struct SendRun {
    /// The most sends in one run: pauses (publisher, store, credit) act between runs, and the home holds the rest of one.
    static let maxSends = 64

    private(set) var sends: [PendingSend] = []
    /// The frames' bytes, counted while a home on another loop has them (RequestCredit.swift).
    private(set) var bytes = 0

    var isEmpty: Bool { sends.isEmpty }
    var isFull: Bool { sends.count >= Self.maxSends }

    /// Whether a send to `channel` may join: the run is empty or goes to that channel.
    func takes(_ channel: ChannelID) -> Bool { sends.isEmpty || sends[0].request.channelID == channel }

    mutating func add(_ request: SendRequest, id: UInt64, bytes size: Int) {
        sends.append(PendingSend(request: request, id: id))
        bytes += size
    }

    /// The sends, in the order read; the run is empty again.
    mutating func take() -> (sends: [PendingSend], bytes: Int) {
        defer {
            sends = []
            bytes = 0
        }
        return (sends, bytes)
    }
}
