// Publishers feel the fan-out (docs/architecture.md). A send is read long before its
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
// hold (the other loops report theirs: `LoopLinks.outboundBytes`). The bytes
// on sessions whose sockets stopped taking any are not waited for
// (`OutboundBounds.drainingBytes`): a pause cannot make them read, and the
// slow-consumer caps end them (docs/reliability.md S3: publishers are not held by
// consumers that stopped). Whether they stopped is a matter of time, so while
// a publisher waits it is looked at every 10 ms, not only when the loop
// turns for something else. Each pause's length goes to the metrics. Loop thread only.

import GuildhallCore
import GuildhallLoop

final class PublisherPause: HomePart {
    unowned let services: HomeServices
    /// Where a released publisher's held sends go on.
    private unowned let reception: Reception
    /// Publishers not read until the outbound bytes drain, with when they were paused.
    private var paused: [(session: HomeSession, since: UInt64)] = []
    /// Bytes the fan-out of sends waiting for their commit will queue.
    private var pendingFanOutBytes = 0
    /// Looks at the paused publishers while there are any.
    private var lookAgain: LoopTimer?

    init(services: HomeServices, reception: Reception) {
        self.services = services
        self.reception = reception
    }

    /// Bytes queued on the sessions of every loop (read once for a run of sends: `Home.sendRun`).
    var queuedBytes: Int { services.gateway.outboundBounds.drainingBytes + services.links.outboundBytes }
    /// Bytes queued and about to be queued on the sessions of every loop.
    var outboundPressure: Int { queuedBytes + pendingFanOutBytes }

    /// A send of `bytes` to `recipients` sessions was accepted by `s`: counts
    /// its fan-out until `fanOutQueued`, and pauses `s` if that and the
    /// `queued` bytes are past the bound.
    func publishing(_ s: HomeSession, bytes: Int, recipients: Int, queued: Int) -> Int {
        let projected = (bytes + 64) * recipients
        pendingFanOutBytes += projected
        if queued + pendingFanOutBytes > settings.outboundPauseBytes && !s.readPauses.contains(.outbound) {
            s.pauseReading(.outbound)
            paused.append((s, services.loop.nowMillis))
            if paused.count == 1 {
                if lookAgain == nil { lookAgain = LoopTimer(loop: services.loop) }
                lookAgain?.start(afterMillis: 10, repeatMillis: 10) { [unowned self] in self.resumeIfDrained() }
            }
        }
        return projected
    }

    /// The send committed (or failed): its fan-out is queued now, or never will be.
    func fanOutQueued(_ projected: Int) { pendingFanOutBytes -= projected }

    /// Once per loop turn: read paused publishers again once the queues drained.
    func resumeIfDrained() {
        guard !paused.isEmpty, outboundPressure <= settings.outboundPauseBytes / 2, !services.gateway.shuttingDown else { return }
        let waiting = paused, now = services.loop.nowMillis
        paused.removeAll()
        lookAgain?.stop()
        for (s, since) in waiting where s.isLoggedIn {
            services.metrics.publisherPauses.record(Double(now &- since) / 1000)
            s.resumeReading(.outbound) { reception.releaseHeldSends(s) }
        }
    }

    /// The home closes: no more looks.
    func close() { lookAgain?.close() }
}

