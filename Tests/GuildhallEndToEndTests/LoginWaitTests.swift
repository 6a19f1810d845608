// The SDK gives up a login that is never answered and connects again, as
// a request times out: a node that hangs, or a balancer that holds the
// connection of a backend gone dead, must not leave the client waiting for
// ever. The "server" here accepts connections and answers nothing.

import Foundation
import Glibc
import GuildhallClient
@testable import GuildhallServer
import Testing

@Suite struct LoginWaitTests {
    /// A listener on 127.0.0.1 that accepts and counts connections, reads nothing and writes nothing.
    final class SilentListener: @unchecked Sendable {
        let port: Int
        let accepted = Locked<[Int32]>([])
        private let fd: Int32

        init() throws {
            let (fd, port) = try loopbackListener(for: "the silent listener")
            self.fd = fd
            self.port = port
            let listener = fd, accepted = self.accepted
            Thread {
                while true {
                    let c = accept(listener, nil, nil)
                    if c < 0 { return }
                    accepted.withLock { $0.append(c) }
                }
            }.start()
        }

        func stop() {
            shutdown(fd, Int32(SHUT_RDWR))
            close(fd)
            for c in accepted.withLock({ $0 }) { close(c) }
        }
    }

    @Test func aLoginNeverAnsweredIsGivenUpAndTriedAgain() async throws {
        let silent = try SilentListener()
        defer { silent.stop() }
        var options = ClientOptions(token: TestServer.token("patient"))
        options.loginTimeoutMs = 300
        let client = GuildhallClient(port: silent.port, options: options)
        let heard = Recorder()
        client.addListener(heard)
        // A thread of its own closes the client once it connected twice (or after a minute): beside
        // sixty suites, a task may wait long for a thread of the shared pool; the client's doesn't.
        Thread {
            let deadline = Date().addingTimeInterval(60)
            while silent.accepted.withLock({ $0.count }) < 2 && Date() < deadline { usleep(10_000) }
            client.close()
        }.start()
        await #expect(throws: (any Error).self, "connect() ends when the client is closed") { try await client.connect() }
        #expect(silent.accepted.withLock { $0.count } >= 2, "a second connection after the first login went unanswered")
        #expect(heard.connectionStory.contains("the login was not answered within 300 ms"), "\(heard.connectionStory)")
    }
}
