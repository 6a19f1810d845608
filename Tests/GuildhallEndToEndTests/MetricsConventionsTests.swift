// The admin endpoint's metrics by Prometheus's conventions (docs/operating.md,
// "Metrics"), on a live scrape after real traffic: promtool's own linter
// passes, counters end in _total, label values are snake_case, the process
// metrics carry the standard names, and build_info names this build.

import Foundation
import GuildhallBuild
import Testing
@testable import GuildhallServer

@Suite struct MetricsConventionsTests {
    @Test func aLiveScrapePassesPromtoolAndTheConventions() async throws {
        let server = try TestServer {
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "op-secret"
        }
        defer { server.stop() }
        // Traffic that fills labelled families: subscriptions by type, an error by code, a close by reason.
        let (alice, _) = try await server.client("alice")
        let (bob, _) = try await server.client("bob")
        let (_, c) = try await guild(server, owner: alice, members: [bob])
        _ = try await alice.messages.send("hello", to: c.channelID)
        await expectError(.notFound) { _ = try await bob.messages.send("nowhere", to: 42) }
        bob.close()
        // Requests are timed by kind, from the frame read to the answer queued; the loops hand their counts over at their sweep.
        try await waitUntil("the requests timed") {
            let text = try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret").body
            return AdminEndpointTests.metric(text, #"guildhall_request_duration_seconds_count{kind="send_message"}"#) == 2
                && AdminEndpointTests.metric(text, #"guildhall_request_duration_seconds_count{kind="create_server"}"#) == 1
        }
        let scrape = try HTTPExchange.request("GET", "/metrics", port: server.adminPort, token: "op-secret").body

        // `make test` installs Debian's prometheus for promtool.
        let promtool = try Child("/bin/sh", ["-c", "/usr/bin/promtool check metrics 2>&1"], environment: ProcessInfo.processInfo.environment)
        promtool.write(scrape)
        promtool.closeInput()
        let findings = promtool.readAll()
        #expect(promtool.wait() == 0, "promtool check metrics: \(findings)")

        var types: [String: String] = [:]
        for line in scrape.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let words = line.split(separator: " ")
            types[String(words[2])] = String(words[3])
        }
        for (name, type) in types {
            #expect(name.hasSuffix("_total") == (type == "counter"), "\(name) is a \(type)")
        }
        // Every label value but the build's own and a bucket's bound (+Inf) is snake_case.
        let label = try Regex(#"(\w+)="([^"]*)""#)
        for line in scrape.split(separator: "\n") where !line.hasPrefix("#") && !line.hasPrefix("guildhall_build_info") {
            for m in line.matches(of: label) where m.output[1].substring != "le" {
                let value = String(m.output[2].substring ?? "")
                #expect(value.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "_" || $0 == "." || $0 == "+" }, "\(line)")
            }
        }
        #expect(scrape.contains(#"guildhall_subscriptions{type="channel_messages"}"#))
        for name in ["process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds", "process_max_fds",
                     "process_start_time_seconds", "process_cpu_seconds_total"] {
            #expect(types[name] != nil, "\(name)")
        }
        #expect(types["guildhall_loop_busy_seconds_total"] == "counter" && types["guildhall_request_duration_seconds"] == "histogram")
        #expect(scrape.contains(#"guildhall_request_duration_seconds_bucket{kind="login",le="+Inf"} 2"#), "two logins timed")
        #expect(scrape.contains(#"guildhall_build_info{version="\#(BuildInfo.version)",commit="\#(BuildInfo.commit)"} 1"#), "\(scrape)")
    }

    /// `guildhall --version` names the same build, and the version is a semantic version.
    @Test func theBinaryPrintsItsVersionAndCommit() throws {
        let (status, out) = try Binary.run(["--version"])
        #expect(status == 0)
        #expect(out.trimmingCharacters(in: .whitespacesAndNewlines) == BuildInfo.description)
        #expect(BuildInfo.version.split(separator: ".").count == 3 && BuildInfo.version.split(separator: ".").allSatisfy { Int($0) != nil })
        #expect(!BuildInfo.commit.isEmpty)
    }
}
