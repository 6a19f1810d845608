// Publishers feel the fan-out (DESIGN §4). A send is read long before its
// fan-out is queued (it waits for its commit first), so a pipelining
// publisher can have thousands read before any recipient's queue grows: shape
// A with no acknowledgement window took the server to 700 MB. So each send
// accepted for commit counts the bytes its fan-out will queue (its size
// times the sessions it reaches) until it commits, and while those plus the
// bytes already queued on the loop's sessions (not yet taken by the kernel)
// are above `outbound-pause-bytes`, a session that publishes stops being
// read. It is read again once they drain below half. The frames a paused
// publisher already sent wait in its socket, and sends already on their way
// from another loop wait at the home (`Reception.releaseHeldSends`). The home
// decides this: it knows what its sends will queue, and the bytes the loops
// hold (the other loops report theirs: `LoopLinks.outboundBytes`). Loop thread only.

import GuildhallCore

final class PublisherPause: HomePart {
    unowned let home: Home
    /// Publishers not read until the outbound bytes drain.
    private var paused: [HomeSession] = []
    /// Bytes the fan-out of sends waiting for their commit will queue.
    private var pendingFanOutBytes = 0

    init(home: Home) { self.home = home }

    /// Bytes queued and about to be queued on the sessions of every loop.
    var outboundPressure: Int { home.loop.outboundBytes + home.links.outboundBytes + pendingFanOutBytes }

    /// A send of `bytes` to `recipients` sessions was accepted by `s`: counts
    /// its fan-out until `fanOutQueued`, and pauses `s` if that is past the bound.
    func publishing(_ s: HomeSession, bytes: Int, recipients: Int) -> Int {
        let projected = (bytes + 64) * recipients
        pendingFanOutBytes += projected
        if outboundPressure > settings.outboundPauseBytes && !s.readPauses.contains(.outbound) {
            s.pauseReading(.outbound)
            paused.append(s)
        }
        return projected
    }

    /// The send committed (or failed): its fan-out is queued now, or never will be.
    func fanOutQueued(_ projected: Int) { pendingFanOutBytes -= projected }

    /// Once per loop turn: read paused publishers again once the queues drained.
    func resumeIfDrained() {
        guard !paused.isEmpty, outboundPressure <= settings.outboundPauseBytes / 2, !home.gateway.shuttingDown else { return }
        let waiting = paused
        paused.removeAll()
        for s in waiting where s.isLoggedIn {
            s.resumeReading(.outbound)
            home.reception.releaseHeldSends(s)
        }
    }
}
