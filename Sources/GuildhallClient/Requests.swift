// How the SDK's typed calls reach the server: each builds its request, and
// `expect` waits for the answer and picks the payload it should carry, or
// throws the server's error. The calls themselves are grouped by area
// (ClientAreas.swift).

import GuildhallWire

extension GuildhallClient {
    func expect<T>(_ body: GHRequest.OneOf_Body, _ pick: (GHResponse.OneOf_Result) -> T?) async throws -> T {
        let result = try await call(body)
        guard let value = pick(result) else {
            throw GuildhallError(code: .internal, message: "unexpected answer \(result) to \(body)")
        }
        return value
    }

    func expectOK(_ body: GHRequest.OneOf_Body) async throws {
        _ = try await expect(body) { if case .ok = $0 { return () } else { return nil } }
    }

    /// A member as a request's answer (several areas change members).
    func member(_ body: GHRequest.OneOf_Body) async throws -> GHMember {
        try await expect(body) { if case .member(let m) = $0 { m } else { nil } }
    }

    /// A round trip to the server; its clock.
    public func heartbeat() async throws -> UInt64 {
        try await expect(.heartbeat(GHHeartbeat())) { if case .pong(let p) = $0 { p.serverTime } else { nil } }
    }
}
