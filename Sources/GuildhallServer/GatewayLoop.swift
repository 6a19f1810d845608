// A gateway on a loop and thread of its own (`loops` > 1; DESIGN §1, §9):
// it accepts on its own listener bound to the client address with
// SO_REUSEPORT (the kernel spreads connections over the loops), holds the
// sessions it accepted for their whole life, and reaches the home only by
// messages (`RemoteHome`); the home and the other gateways reach it through
// its inbox. Built, run and torn down on its own thread.

import Foundation
import GuildhallCore
import GuildhallLoop

final class GatewayLoop {
    let loop = EventLoop()
    private let index: Int
    private let home: RemoteHome
    private let homeInbox: LoopInbox<LoopMessage>
    private var gateway: Gateway!
    private var receiver: InboxReceiver<GatewayMessage>!

    private init(index: Int, settings: Settings, port: Int, secret: [UInt8], clock: @escaping @Sendable () -> UInt64,
                 inbox: LoopInbox<GatewayMessage>, homeInbox: LoopInbox<LoopMessage>, peers: [@Sendable (HandOff) -> Void]) throws {
        self.index = index
        self.homeInbox = homeInbox
        home = RemoteHome(index: index, inbox: homeInbox)
        gateway = Gateway(index: index, loop: loop, settings: settings, log: ServerLog(level: settings.logLevel), secret: secret,
                          clock: clock, home: home)
        gateway.peers = peers
        gateway.homeIsRemote = true
        receiver = InboxReceiver(loop: loop, inbox: inbox) { [unowned self] in self.received($0) }
        do {
            try gateway.listen(port: port, sharing: true)
        } catch {
            receiver.close()
            gateway.closeHandles()
            _ = loop.close()
            throw error
        }
    }

    private func received(_ messages: [GatewayMessage]) {
        for m in messages {
            switch m {
            case .steps(let steps): gateway.carryOut(steps)
            case .handOff(let h): gateway.adopt(h)
            case .settings(let applied, let group):
                gateway.settings = applied
                group?.leave()
            case .stopAccepting: gateway.stopAccepting()
            case .closeAll:
                // The sessions' ends reach the home before the word that this loop is done.
                gateway.closeAll()
                _ = homeInbox.post(.gatewayClosed(index))
                receiver.close()
                return
            }
        }
    }

    /// Starts gateway `index` on a thread of its own, listening on `port`
    /// beside the others; returns once it listens (or throws why it could not).
    static func start(index: Int, settings: Settings, port: Int, secret: [UInt8], clock: @escaping @Sendable () -> UInt64,
                      inbox: LoopInbox<GatewayMessage>, homeInbox: LoopInbox<LoopMessage>,
                      peers: [@Sendable (HandOff) -> Void]) throws -> GatewayThread {
        let started = DispatchSemaphore(value: 0)
        let failure = Locked<String?>(nil)
        let running = GatewayThread()
        let thread = Thread {
            let g: GatewayLoop
            do {
                g = try GatewayLoop(index: index, settings: settings, port: port, secret: secret, clock: clock, inbox: inbox,
                                    homeInbox: homeInbox, peers: peers)
            } catch {
                failure.withLock { $0 = String(describing: error) }
                started.signal()
                running.finished(closing: 0)
                return
            }
            started.signal()
            g.loop.run()
            running.finished(closing: g.loop.close())
        }
        thread.name = "guildhall-gateway-\(index)"
        thread.start()
        started.wait()
        if let failure = failure.withLock({ $0 }) { throw SettingsError(description: failure) }
        return running
    }
}

/// A gateway loop's thread, to wait for at shutdown.
final class GatewayThread: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let closing = Locked<Int32>(0)

    /// The loop ended; `rc`: uv_loop_close's result (0 when no handle leaked).
    func finished(closing rc: Int32) {
        closing.withLock { $0 = rc }
        done.signal()
    }

    /// Returns once the thread's loop has closed, with uv_loop_close's result.
    func join() -> Int32 {
        done.wait()
        done.signal()
        return closing.withLock { $0 }
    }
}
