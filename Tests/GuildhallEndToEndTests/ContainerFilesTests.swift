// What of docker/ can be checked without a Docker engine (docs/operating.md):
// the image's health command runs against a real server; the compose files,
// read by a real YAML parser, name only services, volumes and secrets they
// define, start in order behind health checks, and set only settings that
// exist; Prometheus's configurations pass promtool and read the token where
// the compose files put it; Grafana's provisioning names the dashboard's data
// source; and every metric the dashboard's queries name is on a live scrape
// of a cluster node.

import Foundation
import Testing
@testable import GuildhallServer

@Suite struct ContainerFilesTests {
    static let docker = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docker")

    func file(_ name: String) throws -> String {
        try String(contentsOf: Self.docker.appendingPathComponent(name), encoding: .utf8)
    }

    /// A YAML file as JSON values, parsed by PyYAML (Debian's python3-yaml; `make test` installs it).
    func yaml(_ name: String) throws -> [String: Any] {
        let child = try Child("/usr/bin/python3", ["-c", "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))",
                                                   Self.docker.appendingPathComponent(name).path],
                              environment: ProcessInfo.processInfo.environment)
        child.closeInput()
        let out = child.readAll()
        #expect(child.wait() == 0, "\(name) is not YAML: \(out)")
        return try #require(try JSONSerialization.jsonObject(with: Data(out.utf8)) as? [String: Any], "\(name)")
    }

    /// The Dockerfile's HEALTHCHECK command, with its address pointed at a real server's admin port.
    @Test func theImagesHealthCommandAnswersAgainstARealServer() throws {
        let dockerfile = try file("Dockerfile")
        let line = try #require(dockerfile.split(separator: "\n").first { $0.contains("CMD [\"guildhall\", \"health\"") })
        let words = line.split(separator: "[")[1].split(separator: "]")[0].split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        #expect(words.prefix(3) == ["guildhall", "health", "--admin"])
        #expect(dockerfile.contains("EXPOSE 7400 7401 7402") && dockerfile.contains("GUILDHALL_WS_LISTEN=0.0.0.0:7402"))
        #expect(dockerfile.contains("--product guildhall ") && !dockerfile.contains("guildhall-lab"), "the image carries the product only")
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

    /// Each compose file: references resolve, dependencies wait for health checks that exist, settings exist, mounted files exist.
    @Test(arguments: ["compose.yaml", "compose.cluster.yaml"])
    func aComposeFileIsConsistent(_ name: String) throws {
        let compose = try yaml(name)
        let services = try #require(compose["services"] as? [String: [String: Any]])
        let volumes = Set((compose["volumes"] as? [String: Any] ?? [:]).keys), secrets = Set((compose["secrets"] as? [String: Any] ?? [:]).keys)
        let settings = Set(Settings.specs.map(\.environmentName))
        for (service, s) in services {
            let dependencies = s["depends_on"] as? [String: [String: String]] ?? [:]
            #expect(s["depends_on"] == nil || !dependencies.isEmpty, "\(service): depends_on with conditions")
            for (other, condition) in dependencies {
                let target = try #require(services[other], "\(service) depends on \(other), which \(name) does not define")
                #expect(condition["condition"] != nil, "\(service) → \(other): a start condition")
                if condition["condition"] == "service_healthy" { #expect(target["healthcheck"] != nil, "\(other) has a health check") }
            }
            for secret in s["secrets"] as? [String] ?? [] { #expect(secrets.contains(secret), "\(service): secret \(secret) is defined") }
            for mount in s["volumes"] as? [String] ?? [] {
                let source = String(mount.split(separator: ":")[0])
                if source.hasPrefix(".") {
                    #expect(FileManager.default.fileExists(atPath: Self.docker.appendingPathComponent(source).path), "\(service): \(source) exists")
                } else {
                    #expect(volumes.contains(source), "\(service): volume \(source) is declared")
                }
            }
            for (variable, value) in s["environment"] as? [String: Any] ?? [:] where variable.hasPrefix("GUILDHALL_") {
                #expect(settings.contains(variable), "\(service): \(variable) is a setting")
                if variable.hasSuffix("_FILE"), let path = value as? String, path.hasPrefix("/run/secrets/") {
                    #expect(secrets.contains(String(path.dropFirst("/run/secrets/".count))) && (s["secrets"] as? [String] ?? []).contains(String(path.dropFirst(13))),
                            "\(service): \(path) is a secret it mounts")
                }
            }
            if service.hasPrefix("guildhall") {
                #expect(s["healthcheck"] != nil, "\(service) has a health check")
                #expect((s["environment"] as? [String: Any])?["GUILDHALL_ADMIN_TOKEN_FILE"] as? String == "/run/secrets/admin_token")
            }
        }
        let prometheus = try #require(services["prometheus"])
        #expect((prometheus["secrets"] as? [String])?.contains("admin_token") == true, "Prometheus reads the same token")
        let grafana = try #require(services["grafana"])
        let mounts = grafana["volumes"] as? [String] ?? []
        #expect(mounts.contains("./grafana/provisioning:/etc/grafana/provisioning:ro"))
        #expect(mounts.contains("./grafana-dashboard.json:/var/lib/grafana/dashboards/guildhall.json:ro"))
    }

    /// The cluster compose file (read, not run here): three NATS servers routed
    /// into one JetStream cluster, three nodes with distinct ids sharing one
    /// secret and shard count, replicas 3; Prometheus scrapes all three.
    @Test func theClusterComposeFileHasThreeNATSServersAndThreeNodes() throws {
        let services = try #require(try yaml("compose.cluster.yaml")["services"] as? [String: [String: Any]])
        for i in 1...3 {
            let nats = try #require(services["nats-\(i)"])
            #expect((nats["command"] as? [String])?.starts(with: ["--name", "nats-\(i)", "--js"]) == true)
            #expect(nats["healthcheck"] != nil)
            let node = try #require(services["guildhall-\(i)"]?["environment"] as? [String: Any])
            #expect(node["GUILDHALL_NODE_ID"] as? String == "\(i)")
            #expect(node["GUILDHALL_CLUSTER"] as? String == "nats://nats-1:4222,nats://nats-2:4222,nats://nats-3:4222")
            #expect(node["GUILDHALL_CLUSTER_REPLICAS"] as? String == "3" && node["GUILDHALL_SECRET_FILE"] as? String == "/run/secrets/token_secret")
        }
        let prometheus = try yaml("prometheus.cluster.yml")
        let targets = ((prometheus["scrape_configs"] as? [[String: Any]])?.first?["static_configs"] as? [[String: Any]])?.first?["targets"] as? [String]
        #expect(targets == ["guildhall-1:7401", "guildhall-2:7401", "guildhall-3:7401"])
        let dockerfile = try file("Dockerfile")
        #expect(dockerfile.contains("libnats-dev") && dockerfile.contains("libnats3.4"))
    }

    /// promtool checks both configurations; each reads the bearer token from the secret file the compose files mount.
    @Test(arguments: [("prometheus.yml", "compose.yaml"), ("prometheus.cluster.yml", "compose.cluster.yaml")])
    func prometheusScrapesTheAdminEndpointWithTheTokenFromAFile(_ config: String, _ compose: String) throws {
        // `make test` installs Debian's prometheus for promtool (syntax only: the secret file exists inside the container).
        let promtool = try Child("/bin/sh", ["-c", "/usr/bin/promtool check config --syntax-only \"$0\" 2>&1", Self.docker.appendingPathComponent(config).path],
                                 environment: ProcessInfo.processInfo.environment)
        promtool.closeInput()
        let out = promtool.readAll()
        #expect(promtool.wait() == 0, "\(out)")
        let scrape = try #require((try yaml(config)["scrape_configs"] as? [[String: Any]])?.first)
        #expect(scrape["metrics_path"] as? String == "/metrics")
        let authorization = scrape["authorization"] as? [String: String]
        #expect(authorization?["type"] == "Bearer" && authorization?["credentials_file"] == "/run/secrets/admin_token")
        #expect(authorization?["credentials"] == nil, "no token written into the file")
        let services = try #require(try yaml(compose)["services"] as? [String: [String: Any]])
        let mounted = services["prometheus"]?["volumes"] as? [String] ?? []
        #expect(mounted.contains("./\(config):/etc/prometheus/prometheus.yml:ro"))
    }

    /// Grafana's data source has the uid the dashboard's panels name; the dashboards provider reads where the dashboard is mounted.
    @Test func grafanaIsProvisionedWithTheDashboardsDataSource() throws {
        let sources = try #require(try yaml("grafana/provisioning/datasources/prometheus.yaml")["datasources"] as? [[String: Any]])
        #expect(sources.count == 1 && sources[0]["uid"] as? String == "prometheus" && sources[0]["url"] as? String == "http://prometheus:9090")
        let providers = try #require(try yaml("grafana/provisioning/dashboards/guildhall.yaml")["providers"] as? [[String: Any]])
        #expect((providers.first?["options"] as? [String: String])?["path"] == "/var/lib/grafana/dashboards")
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(try file("grafana-dashboard.json").utf8)) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        for panel in panels { #expect((panel["datasource"] as? [String: String])?["uid"] == "prometheus", "\(panel["title"] ?? "")") }
    }

    /// The dashboard's panels (at least twelve, covering what an operator
    /// watches) ask only for metrics a cluster node exposes.
    @Test func everyMetricTheDashboardAsksForIsExposed() async throws {
        let dashboard = try #require(try JSONSerialization.jsonObject(with: Data(try file("grafana-dashboard.json").utf8)) as? [String: Any])
        let panels = try #require(dashboard["panels"] as? [[String: Any]])
        #expect(panels.count >= 12)
        let titles = panels.compactMap { $0["title"] as? String }.joined(separator: "|").lowercased()
        for subject in ["sends", "deliveries", "commit latency", "sessions", "errors", "rate refusals", "slow-consumer", "queued bytes",
                        "loop busy", "store queue", "shards", "log appends"] {
            #expect(titles.contains(subject), "a panel for \(subject)")
        }
        let exprs = panels.flatMap { ($0["targets"] as? [[String: Any]] ?? []).compactMap { $0["expr"] as? String } }
        let names = Set(exprs.flatMap { $0.matches(of: /\b(guildhall_[a-z0-9_]+|process_[a-z0-9_]+)/).map { String($0.output.1) } })

        // A node of a cluster, after a send (so that every family has a sample).
        let nats = try NATSServer()
        defer { nats.stop() }
        let node = try ClusterLeaseTests.node(1, cluster: nats.url, name: "dash\(nats.port)") { $0.adminToken = "op-secret" }
        defer { node.stop() }
        let (alice, _) = try await node.client("alice")
        let (_, c) = try await guild(node, owner: alice, members: [])
        _ = try await alice.messages.send("hello", to: c.channelID)
        try await waitUntil("the requests timed at the sweep") {
            try HTTPExchange.request("GET", "/metrics", port: node.adminPort, token: "op-secret").body.contains("kind=\"send_message\"")
        }
        let scrape = try HTTPExchange.request("GET", "/metrics", port: node.adminPort, token: "op-secret").body
        let families = Set(scrape.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) })
        for name in names {
            let family = ["_bucket", "_count", "_sum"].reduce(name) { n, suffix in n.hasSuffix(suffix) && !families.contains(n) ? String(n.dropLast(suffix.count)) : n }
            #expect(families.contains(family), "\(name), asked for by the dashboard, is on a scrape")
        }
    }
}
