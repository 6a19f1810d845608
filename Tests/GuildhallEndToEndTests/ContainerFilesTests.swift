// What of docker/ can be checked without a Docker engine (docs/operating.md): the
// image's health command runs against a real server, the dashboard loads as
// JSON and shows the five panels, and Prometheus scrapes the admin endpoint.

import Foundation
import Testing
@testable import GuildhallServer

@Suite struct ContainerFilesTests {
    static let docker = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docker")

    func file(_ name: String) throws -> String {
        try String(contentsOf: Self.docker.appendingPathComponent(name), encoding: .utf8)
    }

    /// The Dockerfile's HEALTHCHECK command, with its address pointed at a real server's admin port.
    @Test func theImagesHealthCommandAnswersAgainstARealServer() throws {
        let dockerfile = try file("Dockerfile")
        let line = try #require(dockerfile.split(separator: "\n").first { $0.contains("CMD [\"guildhall\", \"health\"") })
        let words = line.split(separator: "[")[1].split(separator: "]")[0].split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        #expect(words.prefix(3) == ["guildhall", "health", "--admin"])
        #expect(dockerfile.contains("EXPOSE 7400 7401 7402") && dockerfile.contains("GUILDHALL_WS_LISTEN=0.0.0.0:7402"))
        let server = try TestServer {
            $0.adminListen = "127.0.0.1:0"
            $0.adminToken = "t"
        }
        defer { server.stop() }
        let args = Array(words.dropFirst()).map { $0 == "127.0.0.1:7401" ? "127.0.0.1:\(server.adminPort)" : $0 }
        #expect(try Binary.run(args).0 == 0)
        server.stop()
        #expect(try Binary.run(args).0 != 0, "a stopped server is unhealthy")
    }

    @Test func theDashboardIsJSONWithTheFivePanels() throws {
        let object = try JSONSerialization.jsonObject(with: Data(try file("grafana-dashboard.json").utf8)) as? [String: Any]
        let panels = try #require(object?["panels"] as? [[String: Any]])
        let exprs = panels.compactMap { ($0["targets"] as? [[String: Any]])?.first?["expr"] as? String }
        for metric in ["guildhall_sessions", "guildhall_messages_stored_total", "guildhall_deliveries_total",
                       "guildhall_commit_latency_seconds_bucket", "guildhall_slow_consumer_cuts_total"] {
            #expect(exprs.contains { $0.contains(metric) }, "\(metric)")
        }
    }

    @Test func prometheusScrapesTheAdminEndpointWithTheToken() throws {
        // `make test` installs Debian's prometheus for promtool.
        let promtool = try Child("/usr/bin/promtool", ["check", "config", Self.docker.appendingPathComponent("prometheus.yml").path],
                                 environment: ProcessInfo.processInfo.environment)
        promtool.closeInput()
        let out = promtool.readAll()
        #expect(promtool.wait() == 0, "\(out)")
        let config = try file("prometheus.yml")
        #expect(config.contains("metrics_path: /metrics") && config.contains("guildhall:7401") && config.contains("type: Bearer"))
        let compose = try file("compose.yaml")
        #expect(compose.contains("prometheus.yml:/etc/prometheus/prometheus.yml") && compose.contains("GUILDHALL_ADMIN_TOKEN"))
    }

    /// The cluster compose file (read, not run here): three NATS servers routed
    /// into one JetStream cluster, three nodes with distinct ids sharing one
    /// secret and shard count, replicas 3; the image carries cnats.
    @Test func theClusterComposeFileHasThreeNATSServersAndThreeNodes() throws {
        let compose = try file("compose.cluster.yaml")
        for i in 1...3 {
            #expect(compose.contains("  nats-\(i):\n") && compose.contains("  guildhall-\(i):\n"))
            #expect(compose.contains("GUILDHALL_NODE_ID: \"\(i)\""))
            #expect(compose.contains("\"--name\", \"nats-\(i)\", \"--js\""))
        }
        #expect(compose.contains("GUILDHALL_CLUSTER: nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222"))
        #expect(compose.contains("GUILDHALL_CLUSTER_REPLICAS: \"3\"") && compose.contains("GUILDHALL_SECRET: ${GUILDHALL_SECRET:?"))
        let settings = Set(Settings.specs.map(\.environmentName))
        for name in ["GUILDHALL_CLUSTER", "GUILDHALL_CLUSTER_NAME", "GUILDHALL_CLUSTER_REPLICAS", "GUILDHALL_SHARDS", "GUILDHALL_NODE_ID"] {
            #expect(settings.contains(name), "\(name) is a setting")
        }
        let dockerfile = try file("Dockerfile")
        #expect(dockerfile.contains("libnats-dev") && dockerfile.contains("libnats3.4"))
    }
}
