// docs/cluster.md, the SDK's part: a client given several nodes' addresses
// connects to the first it can reach, and moves to the next when its node
// goes away (here two independent servers that share the token secret).

import Foundation
import GuildhallClient
import GuildhallWire
import Testing

@Suite struct ServerListTests {
    @Test func aClientSkipsANodeItCannotReachAndMovesOnWhenItsNodeShutsDown() async throws {
        let a = try TestServer()
        let b = try TestServer()
        defer { b.stop() }
        let dead = try NATSServer.freePort()
        let client = GuildhallClient(addresses: [("127.0.0.1", dead), ("127.0.0.1", a.port), ("127.0.0.1", b.port)],
                                     options: ClientOptions(token: b.token("alice")))
        let heard = Recorder()
        client.addListener(heard)
        defer { client.close() }
        try await client.connect()
        let onA = try await client.servers.create(name: "on a")
        #expect(try await client.servers.mine().map(\.serverID) == [onA.serverID], "connected to a, the first reachable")
        a.stop()
        try await waitUntil("the client on b") {
            guard heard.connectedCount >= 2 else { return false }
            return (try? await client.servers.mine()) == []
        }
        _ = try await client.servers.create(name: "on b")
        #expect(try await client.servers.mine().map(\.name) == ["on b"])
    }
}
