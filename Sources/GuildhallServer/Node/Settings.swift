// Every setting an operator can change, with its default and meaning, in one
// table. The same table parses the configuration file, the environment and
// `--set` flags (flags beat environment beat file), prints the annotated
// configuration (`guildhall serve --print-config`) and generates docs/configuration.md.

import Foundation
import GuildhallCore
import GuildhallLoop
import GuildhallStore

public struct Settings: Sendable, Equatable {
    public var listen = "127.0.0.1:7400"
    public var adminListen = "127.0.0.1:7401"
    public var wsListen = "127.0.0.1:7402"
    public var wsAllowedOrigins = ""
    public var webClient = "on"
    public var cluster = ""
    public var clusterName = "guildhall"
    public var clusterReplicas = 3
    public var shards = 256
    public var leaseTTLMs = 10_000
    public var leaseRenewMs = 3_000
    public var adminToken = ""
    public var adminTokenFile = ""
    /// Where each value came from, by key: "file", "environment", "flag" or
    /// "admin" (PUT /settings); a key not here has its default.
    public var sources: [String: String] = [:]
    /// Per key the admin overrides, what the layers beneath gave (SettingsLayers.swift): DELETE /settings/<key> goes back to it.
    var beneathAdmin: [String: Beneath] = [:]
    struct Beneath: Sendable, Equatable {
        let value: String
        let source: String?
    }
    public var data = "./data"
    public var secret = ""
    public var secretFile = ""
    public var tokenKeys = ""
    public var trustedProxies = ""
    public var tlsCertFile = ""
    public var tlsKeyFile = ""
    public var tlsClient = "off"
    public var tlsWebSocket = "off"
    public var tlsAdmin = "off"
    public var tokenKeysFile = ""
    public var nodeID = 0
    public var loops = Settings.defaultLoops
    /// One per core but one, at least one (docs/architecture.md): under
    /// load the store's writer and the kernel's socket work take about a core,
    /// and a loop sharing its core with them lost more than it added: on two
    /// cores one loop outran two in every shape of the yardstick (docs/performance.md).
    public static let defaultLoops = max(1, min(64, ProcessInfo.processInfo.activeProcessorCount - 1))
    /// How the reference and the admin endpoint show that default (it depends on the machine).
    static let defaultLoopsText = "one per core but one, at least one"
    public var logLevel = "info"
    public var logFormat = "logfmt"
    public var synchronous = "NORMAL"
    public var searchIndex = "on"
    public var writeBatch = 512
    public var inlineCommitMax = 16
    public var commitJournal = "on"
    /// Under synchronous=FULL every commit waits on fsync: never on a loop.
    var loopCommitMax: Int { synchronous.uppercased() == "FULL" ? 0 : inlineCommitMax }
    public var checkpointIntervalMs = 200
    public var storeQueueMax = 8192
    public var maxFrameBytes = Limits.maxFrameBytes
    public var loginDeadlineMs = 5_000
    public var heartbeatIntervalMs = 30_000
    /// Two missed heartbeats and a second (docs/reliability.md L1).
    /// Two heartbeats: the sweep that finds it adds at most half a second, so a silent client is closed within 2 × interval + 1 s (docs/reliability.md L1).
    public var idleTimeoutMs = 60_000
    public var frameDeadlineMs = 10_000
    public var maxConnections = 10_000
    public var rateSession = 50
    public var rateQueries = 20
    public var rateChanges = 10
    public var rateMessages = 5
    public var rateTyping = 2
    public var rateStrikes = 50
    public var loginFailuresBurst = 3
    public var loginFailureIntervalMs = 6_000
    public var recallWindowSeconds = 120
    public var searchDeadlineMs = 2_000
    public var maxFileBytes = 25 << 20
    public var fileQuotaBytes = 1 << 30
    public var uploadURLSeconds = 600
    public var uploadDeadlineSeconds = 300
    public var downloadURLSeconds = 3_600
    public var filesPerMessage = 10
    public var fileGraceSeconds = 86_400
    public var fileSweepSeconds = 3_600
    public var filesURL = ""
    public var filesStore = "local"
    public var filesFolder = ""
    public var filesFolderShared = "off"
    public var s3Endpoint = ""
    public var s3Region = "us-east-1"
    public var s3Bucket = ""
    public var s3AccessKey = ""
    public var s3AccessKeyFile = ""
    public var s3SecretKey = ""
    public var s3SecretKeyFile = ""
    public var s3PathStyle = "on"
    /// The local store's folder: files-folder, or <data>/files.
    var filesFolderPath: String { filesFolder.isEmpty ? (data as NSString).appendingPathComponent("files") : filesFolder }
    /// Where upload and download links point: files-url, or the WebSocket listener's address.
    var filesBaseURL: String {
        guard filesURL.isEmpty else { return filesURL }
        let scheme = tlsWebSocket == "on" ? "https" : "http"
        guard let (host, port) = SocketAddress.split(wsListen) else { return "\(scheme)://127.0.0.1" }
        let shown = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(shown):\(port == 0 ? webSocketBoundPort : port)"
    }
    /// The port the WebSocket listener bound when ws-listen asked for any (port 0); set once it listens.
    var webSocketBoundPort = 0
    public var reactionTypesPerMessage = 20
    public var reactionsPerUserPerMessage = 10
    public var maxSessionsPerUser = 10
    public var maxBodyBytes = Limits.maxBodyBytes
    public var maxMentions = Limits.maxMentions
    public var dedupWindowSeconds = 300
    public var outboundHardCapBytes = 4 * 1024 * 1024
    public var shutdownGraceMs = 5_000
    public var smallServerThreshold = 2_000
    public var smallServerLowMark = 0
    var serverSizeMarks: ServerSizeMarks { ServerSizeMarks(threshold: smallServerThreshold, lowMark: smallServerLowMark) }
    public var unreadDisplayCap = 99
    public var mentionWindowSeconds = 7 * 86_400
    public var typingThrottleMs = 3_000
    public var typingExpiryMs = 10_000
    public var typingFrameIntervalMs = 1_000
    public var presenceFrameIntervalMs = 1_000
    public var pinsPerChannel = 50
    public var auditLogRetentionDays = 90
    public var pushGatewayURL = ""
    public var pushSecret = ""
    public var pushSecretFile = ""
    public var pushDeadlineSeconds = 300
    public var presenceIdleSeconds = 300
    public var limitUserPresence = 1_000
    public var limitChannelMessages = 100
    public var limitChannelUnreadCount = 500
    public var limitChannelUnreadStatus = 1_000
    public var limitServerNotifications = 2_000
    public var limitChannelTyping = 100
    public var limitGuestChannel = 100
    public var limitGuestServer = 100
    public var autoSubscribeMaxChannels = 10_000
    public var positionFlushMs = 250
    public var resumeWindowMs = 60_000
    public var resumeEvents = 10_000
    public var resumeBytes = 4 * 1024 * 1024
    public var syncPackageSize = 200
    public var offlineRetentionDays = 7
    public var outboundShedBytes = 256 * 1024
    public var outboundPauseBytes = 32 * 1024 * 1024
    public var outboundPauseStuckMs = 100
    public var socketSendBufferBytes = 0
    public var outboundSoftCapBytes = 1024 * 1024
    public var outboundSoftCapMs = 10_000
    public var outboundTotalCapBytes = 512 * 1024 * 1024
    public var writeStallMs = 10_000
    public var receiptMaxMembers = 200
    public var receiptWindowSeconds = 3 * 86_400
    public var receiptRequesters = "all"
    public var receiptCountVisibility = "sender"
    public var deliveryReceipts = "on"

    public init() {}

    /// No request rates, failed-login limit or connection cap: for load
    /// generators and tests, which drive sessions far faster than people.
    public static let unlimited: [(String, String)] = [
        ("rate-session", "0"), ("rate-queries", "0"), ("rate-changes", "0"), ("rate-messages", "0"), ("rate-typing", "0"),
        ("login-failure-interval-ms", "0"), ("max-connections", "10000000"),
    ]
    public static var unlimitedFlags: [String] { unlimited.flatMap { ["--set", "\($0.0)=\($0.1)"] } }

    public mutating func unlimited() {
        for (key, value) in Self.unlimited { try? set(key, value) }
    }

    public var subscriptionLimits: SubscriptionLimits {
        var l = SubscriptionLimits()
        l.channelMessages = limitChannelMessages
        l.channelUnreadCount = limitChannelUnreadCount
        l.channelUnreadStatus = limitChannelUnreadStatus
        l.serverNotifications = limitServerNotifications
        l.channelTyping = limitChannelTyping
        l.guestChannel = limitGuestChannel
        l.guestServer = limitGuestServer
        l.autoChannels = autoSubscribeMaxChannels
        return l
    }
}

/// One row of the settings table.
public struct SettingSpec: Sendable {
    public let key: String
    public let doc: String
    /// Changes apply at once on SIGHUP (or the admin endpoint), without a restart.
    public var live = false
    let get: @Sendable (Settings) -> String
    let set: @Sendable (inout Settings, String) throws(SettingsError) -> Void

    /// The environment variable: GUILDHALL_ + key in upper case with underscores.
    public var environmentName: String { "GUILDHALL_" + key.uppercased().replacingOccurrences(of: "-", with: "_") }
}

public struct SettingsError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

extension Settings {
    public static let specs: [SettingSpec] = [
        text("listen", "Address of the client listener, HOST:PORT (port 0 picks a free one).", \.listen) { v throws(SettingsError) in
            if SocketAddressText.isValid(v) { return }
            throw SettingsError(description: "listen must be HOST:PORT, not \(v)")
        },
        text("admin-listen", "Admin HTTP endpoint (health, readiness, metrics, settings, backup, drain), HOST:PORT; empty: none. Never the client port.",
             \.adminListen) { v throws(SettingsError) in
            guard v.isEmpty || SocketAddressText.isValid(v) else { throw SettingsError(description: "admin-listen must be HOST:PORT or empty, not \(v)") }
        },
        text("ws-listen", "WebSocket listener for browsers (upgrade at /ws), HOST:PORT; empty: none.", \.wsListen) { v throws(SettingsError) in
            guard v.isEmpty || SocketAddressText.isValid(v) else { throw SettingsError(description: "ws-listen must be HOST:PORT or empty, not \(v)") }
        },
        live(text("trusted-proxies", "Load balancers and proxies whose PROXY header (v1 or v2, on the client and WebSocket listeners) or X-Forwarded-For (on the WebSocket upgrade) names the client: addresses and CIDR blocks separated by commas. From any other peer a PROXY header is refused; empty: none is trusted.",
                  \.trustedProxies) { v throws(SettingsError) in
            do throws(TrustedProxiesError) { _ = try TrustedProxies(v) } catch { throw SettingsError(description: error.description) }
        }),
        live(text("tls-cert-file", "PEM certificate chain (the server's certificate first) for the listeners that speak TLS; read again on SIGHUP and POST /tls/reload.",
                  \.tlsCertFile)),
        live(text("tls-key-file", "PEM private key of tls-cert-file's certificate.", \.tlsKeyFile)),
        choice("tls-client", "Whether the client listener speaks TLS (1.2 and 1.3): on or off.", \.tlsClient, ["on", "off"]),
        choice("tls-websocket", "Whether the WebSocket listener speaks TLS (wss, and https for the web client): on or off.", \.tlsWebSocket, ["on", "off"]),
        choice("tls-admin", "Whether the admin endpoint speaks TLS (https): on or off.", \.tlsAdmin, ["on", "off"]),
        text("ws-allowed-origins", "Pages that may open a WebSocket: origins separated by commas, * for any; empty: pages of the listener's own host.",
             \.wsAllowedOrigins),
        live(choice("web-client", "Whether the WebSocket listener serves the web client at /: on or off.", \.webClient, ["on", "off"])),
        text("admin-token", "Bearer token the admin endpoint requires (all but /healthz and /readyz); required unless admin-listen is loopback.",
             \.adminToken),
        text("admin-token-file", "A file holding admin-token (a container secret), read at start. Set one of the two.",
             \.adminTokenFile),
        text("cluster", "NATS servers of the deployment, nats://HOST:PORT[,…]; empty: a single node, no NATS.", \.cluster),
        text("cluster-name", "The deployment's name (its lease bucket and subjects).", \.clusterName),
        int("cluster-replicas", "Replicas of the deployment's JetStream buckets and streams (3 in a 3-server NATS cluster).",
            \.clusterReplicas, 1...5),
        int("shards", "Shards of the deployment (fixed for its life): guilds and users are placed by hash mod shards.", \.shards, 1...65_536),
        int("lease-ttl-ms", "A shard lease not renewed for this long expires; its owner stops serving it at three quarters of it.",
            \.leaseTTLMs, 1_000...600_000),
        int("lease-renew-ms", "How often a node renews its leases, heartbeats and rebalances shards.", \.leaseRenewMs, 100...60_000),
        text("data", "Folder for the database and the generated secret.", \.data),
        text("secret", "HMAC secret for login tokens. Empty: generated once into <data>/secret.", \.secret),
        text("secret-file", "A file holding secret (a container secret); read at start. Set one of the two.", \.secretFile),
        live(text("token-keys", "Keys for JWT logins, a JWKS (kid and alg on every key: oct HS256, EC ES256, OKP EdDSA); empty: v1 tokens only (docs/security.md).",
                  \.tokenKeys)),
        live(text("token-keys-file", "A file holding token-keys (a JWKS); read at start and again on SIGHUP, so keys rotate without a restart.",
                  \.tokenKeysFile)),
        int("node-id", "This node's id (0-1023), part of every message UID.", \.nodeID, 0...1023),
        int("loops", "Event loops, each on a thread of its own accepting client connections and homing the guilds and users placed on it by id (default: one per core but one, at least one).",
            \.loops, 1...64),
        choice("log-level", "Least severe log level written: debug, info, warn, error.", \.logLevel, ["debug", "info", "warn", "error"]),
        choice("log-format", "Log lines on stderr: logfmt (time=… level=… msg=… key=value) or json (one object a line).", \.logFormat,
               ["logfmt", "json"]),
        choice("synchronous", "SQLite durability: NORMAL survives a process crash, FULL also a power loss.", \.synchronous, ["NORMAL", "FULL"]),
        choice("search-index", "Whether messages' words are indexed for search: on or off (searches then answer 503; turned on again, the index is rebuilt at startup).",
               \.searchIndex, ["on", "off"]),
        int("write-batch", "Most operations committed in one transaction.", \.writeBatch, 1...100_000),
        int("checkpoint-interval-ms", "How often a thread of its own copies committed WAL pages into the database file (no commit waits for it), starting the WAL over once it holds \(StoreOptions.defaultWALRestartPages) pages.",
            \.checkpointIntervalMs, 10...60_000),
        live(int("inline-commit-max", "A loop turn with at most this many operations commits them itself when the writer is idle, saving the round trip to the writer (a turn of latency while the loop is busy writing); 0: always the writer, as always under synchronous=FULL.",
                 \.inlineCommitMax, 0...512)),
        choice("commit-journal", "Under synchronous=NORMAL on a single node: on, such a turn (inline-commit-max) is appended to \(LocalJournal.file) in the data folder and answered at once, as durable as a NORMAL commit (a process crash loses none of it; the next start stores what SQLite lacked), while the writer stores it in SQLite behind it; off, the loop commits it to SQLite itself.",
               \.commitJournal, ["on", "off"]),
        int("store-queue-max", "Operations waiting for commit before publishers stop being read.", \.storeQueueMax, 1...10_000_000),
        int("max-frame-bytes", "Largest frame a logged-in client may send.", \.maxFrameBytes, 1024...(16 << 20)),
        int("login-deadline-ms", "Time a new connection has to log in.", \.loginDeadlineMs, 100...600_000),
        int("heartbeat-interval-ms", "Heartbeat interval the server asks clients for.", \.heartbeatIntervalMs, 100...3_600_000),
        int("idle-timeout-ms", "A session that sends no complete frame for this long is closed (default: two heartbeats; found within half a second more).",
            \.idleTimeoutMs, 200...7_200_000),
        int("frame-deadline-ms", "A frame a client started must be complete within this time, or the connection is closed.",
            \.frameDeadlineMs, 100...600_000),
        live(int("max-connections", "Client connections the node holds at once (also kept below the open-file limit less 64); past it a new one gets SERVER_FULL and is closed.",
                 \.maxConnections, 1...10_000_000)),
        live(int("rate-session", "Heartbeats, acknowledgements and logouts per second per session (bursts of twice as many); 0: no limit.",
                 \.rateSession, 0...100_000)),
        live(int("rate-queries", "Reads (lists, history, lookups) per second per session, bursts of twice as many; over it: 429 with retry_after_ms. 0: no limit.",
                 \.rateQueries, 0...100_000)),
        live(int("rate-changes", "Changes (servers, members, channels, subscriptions, read positions) per second per session, bursts of twice as many. 0: no limit.",
                 \.rateChanges, 0...100_000)),
        live(int("rate-messages", "Messages and receipts per second per session, bursts of twice as many. 0: no limit.",
                 \.rateMessages, 0...100_000)),
        live(int("rate-typing", "Typing requests per second per session, bursts of twice as many. 0: no limit.", \.rateTyping, 0...100_000)),
        live(int("rate-strikes", "Requests refused for rate within 10 s after which the session is closed with RATE_LIMITED.",
                 \.rateStrikes, 1...1_000_000)),
        live(int("login-failures-burst", "Failed logins a user may have at once, then one per login-failure-interval-ms (the rest: 429, not checked); a peer address ten times as many, ten times as often.",
                 \.loginFailuresBurst, 1...1_000_000)),
        live(int("recall-window-seconds", "How long after sending a sender may recall a message (RECALL_OTHERS may at any time).",
                 \.recallWindowSeconds, 0...31_536_000)),
        live(int("max-file-bytes", "Largest file one may upload (CreateUpload's size; 413 above it).", \.maxFileBytes, 1...(1 << 40))),
        live(int("file-quota-bytes", "Bytes of uploads one user may hold (414 past it); removed messages' files stop counting.",
                 \.fileQuotaBytes, 0...(1 << 50))),
        live(int("upload-url-seconds", "How long an upload URL works.", \.uploadURLSeconds, 10...604_800)),
        live(int("upload-deadline-seconds", "An upload to this node not done this long after it began is cut (408) and nothing is kept.",
                 \.uploadDeadlineSeconds, 1...86_400)),
        live(int("download-url-seconds", "A download link made for a reader works at least this long and at most twice as long (one reader gets the same link within a period, so browsers cache the file).",
                 \.downloadURLSeconds, 60...604_800)),
        live(int("files-per-message", "Most files one message may carry.", \.filesPerMessage, 1...100)),
        live(int("file-grace-seconds", "An upload no message carries this long after it was asked for is removed by the sweep (and stops counting against the quota); so are bytes no file names this long.",
                 \.fileGraceSeconds, 1...31_536_000)),
        live(int("file-sweep-seconds", "How often each home sweeps its files (file-grace-seconds).", \.fileSweepSeconds, 1...86_400)),
        live(text("files-url", "Where clients reach the files this node serves, http(s)://HOST[:PORT] (a proxy's address); empty: ws-listen's, over https when tls-websocket is on.",
                  \.filesURL) { v throws(SettingsError) in
            guard v.isEmpty || (v.hasPrefix("http://") || v.hasPrefix("https://")) && !v.hasSuffix("/") else {
                throw SettingsError(description: "files-url must be http(s)://HOST[:PORT] without a trailing /, or empty, not \(v)")
            }
        }),
        choice("files-store", "Where files' bytes are kept: local (files-folder, served by the WebSocket listener), s3 (an S3-compatible bucket; clients upload and download there by presigned URLs), or off (no files: uploads answer 503).",
               \.filesStore, ["local", "s3", "off"]),
        text("files-folder", "The local store's folder; empty: <data>/files.", \.filesFolder),
        choice("files-folder-shared", "Whether files-folder is one folder every node of a cluster shares (a network filesystem): on or off. A cluster refuses to start with the local store unless it is.",
               \.filesFolderShared, ["on", "off"]),
        text("s3-endpoint", "The S3-compatible store, http(s)://HOST[:PORT] (AWS: https://s3.REGION.amazonaws.com).", \.s3Endpoint),
        text("s3-region", "The store's region (signatures name it).", \.s3Region),
        text("s3-bucket", "The bucket files go to (under files/<file id>).", \.s3Bucket),
        text("s3-access-key", "The access key id Guildhall signs with.", \.s3AccessKey),
        text("s3-access-key-file", "A file holding s3-access-key (a container secret), read at start. Set one of the two.", \.s3AccessKeyFile),
        text("s3-secret-key", "The secret access key Guildhall signs with.", \.s3SecretKey),
        text("s3-secret-key-file", "A file holding s3-secret-key (a container secret), read at start. Set one of the two.", \.s3SecretKeyFile),
        choice("s3-path-style", "Path-style addresses (ENDPOINT/BUCKET/KEY, which every S3-compatible store takes): on; off for virtual hosts (BUCKET.HOST/KEY).",
               \.s3PathStyle, ["on", "off"]),
        live(int("search-deadline-ms", "How long one message search may run before it is stopped and answered 503 (narrow the query).",
                 \.searchDeadlineMs, 10...60_000)),
        live(int("reaction-types-per-message", "Most quick-comment types one message may carry.", \.reactionTypesPerMessage, 1...10_000)),
        live(int("reactions-per-user-per-message", "Most quick comments one user may put on one message.", \.reactionsPerUserPerMessage, 1...10_000)),
        live(int("login-failure-interval-ms", "See login-failures-burst; 0: failed logins are not limited.", \.loginFailureIntervalMs, 0...3_600_000)),
        int("max-sessions-per-user", "Sessions (devices) one user may have online at once.", \.maxSessionsPerUser, 1...1000),
        int("max-body-bytes", "Largest message body.", \.maxBodyBytes, 1...(1 << 20)),
        int("max-mentions", "Most user ids one message may mention.", \.maxMentions, 0...10_000),
        int("dedup-window-seconds", "How long a client-side message id de-duplicates resends.", \.dedupWindowSeconds, 0...86_400),
        live(int("outbound-hard-cap-bytes", "Bytes queued to one session before it is closed at once as a slow consumer (it may resume).", \.outboundHardCapBytes, 4096...(1 << 30))),
        int("shutdown-grace-ms", "On SIGTERM, time allowed for pending commits and writes before closing.", \.shutdownGraceMs, 0...600_000),
        live(int("small-server-threshold", "Servers with fewer members deliver everything to every online member without subscriptions.",
                 \.smallServerThreshold, 0...100_000_000)),
        live(int("small-server-low-mark", "0: off. Otherwise a server that reached small-server-threshold is small again only below this many members.",
                 \.smallServerLowMark, 0...100_000_000)),
        live(int("unread-display-cap", "The display cap sent with unread counts (clients show 99+); counts stay exact.", \.unreadDisplayCap, 1...1_000_000)),
        live(int("mention-window-seconds", "How long a mention counts towards the mention count.", \.mentionWindowSeconds, 0...31_536_000)),
        live(int("typing-throttle-ms", "At most one typing event per user per channel is fanned out in this time.", \.typingThrottleMs, 0...60_000)),
        live(int("typing-expiry-ms", "A typing state expires this long after the user last typed.", \.typingExpiryMs, 100...600_000)),
        live(int("typing-frame-interval-ms", "At most one typing frame per channel per subscriber in this time.", \.typingFrameIntervalMs, 0...60_000)),
        live(int("presence-frame-interval-ms", "At most one presence frame per subscriber in this time, with the latest state of each user.",
                 \.presenceFrameIntervalMs, 0...60_000)),
        live(int("presence-idle-seconds", "A session without requests (besides heartbeats) this long is idle; 0: only when the client says so.",
                 \.presenceIdleSeconds, 0...86_400)),
        live(int("pins-per-channel", "The most messages a channel may have pinned.", \.pinsPerChannel, 1...10_000)),
        text("push-gateway-url", "Where push notices go (docs/features.md \"Push\"): an http(s) URL the node POSTs batches to; empty: no push.",
             \.pushGatewayURL) { v throws(SettingsError) in
            guard v.isEmpty || v.hasPrefix("http://") || v.hasPrefix("https://") else {
                throw SettingsError(description: "push-gateway-url must be an http(s) URL, or empty, not \(v)")
            }
        },
        text("push-secret", "The key push notices are signed with (X-Guildhall-Signature, HMAC-SHA256); needed with push-gateway-url.", \.pushSecret),
        text("push-secret-file", "A file holding push-secret (a container secret), read at start. Set one of the two.", \.pushSecretFile),
        int("push-deadline-seconds", "How long a batch of push notices is tried again (no answer, 429, 5xx) before it is given up.",
            \.pushDeadlineSeconds, 1...86_400),
        live(int("audit-log-retention-days", "Audit log entries older than this are deleted (daily, and at startup).", \.auditLogRetentionDays, 1...3650)),
        live(int("limit-user-presence", "Per-user USER_PRESENCE subscriptions.", \.limitUserPresence, 0...1_000_000)),
        live(int("limit-channel-msg", "Per-user CHANNEL_MSG subscriptions.", \.limitChannelMessages, 0...1_000_000)),
        live(int("limit-channel-unread-count", "Per-user CHANNEL_UNREAD_COUNT subscriptions.", \.limitChannelUnreadCount, 0...1_000_000)),
        live(int("limit-channel-unread-status", "Per-user CHANNEL_UNREAD_STATUS subscriptions (manual mode).", \.limitChannelUnreadStatus, 0...1_000_000)),
        live(int("limit-server-msg", "Per-user SERVER_MSG subscriptions.", \.limitServerNotifications, 0...1_000_000)),
        live(int("limit-channel-typing", "Per-user CHANNEL_TYPING subscriptions.", \.limitChannelTyping, 0...1_000_000)),
        live(int("limit-guest-channel", "Per-user GUEST_CHANNEL subscriptions.", \.limitGuestChannel, 0...1_000_000)),
        live(int("limit-guest-server", "Per-user GUEST_SERVER subscriptions.", \.limitGuestServer, 0...1_000_000)),
        int("auto-subscribe-max-channels", "Most channels auto-subscribe mode covers for one user.", \.autoSubscribeMaxChannels, 0...1_000_000),
        int("position-flush-ms", "How often moved read positions of senders are written (explicit mark-read is written at once).",
            \.positionFlushMs, 10...60_000),
        int("resume-window-ms", "How long a dropped session waits to be resumed, keeping its subscriptions and the events it misses.",
            \.resumeWindowMs, 0...3_600_000),
        int("resume-events", "Most events a session keeps for a resume; past it, the oldest go and a resume falls back to offline sync.",
            \.resumeEvents, 0...1_000_000),
        int("resume-bytes", "Most bytes of events a session keeps for a resume (with its queue, what a client that reads and acknowledges nothing costs); past it, the oldest go and a resume names them as missed.",
            \.resumeBytes, 65_536...(1 << 30)),
        live(int("sync-package-size", "Offline items per sync package.", \.syncPackageSize, 1...10_000)),
        int("offline-retention-days", "Offline items older than this are deleted at startup.", \.offlineRetentionDays, 1...3650),
        live(int("outbound-pause-bytes", "Bytes queued on all sessions of a loop past which publishers stop being read until they drain to half.",
                 \.outboundPauseBytes, 0...(1 << 40))),
        live(int("outbound-pause-stuck-ms", "A session whose socket took none of its queued bytes for this long no longer holds publishers (outbound-pause-bytes counts only sessions taking bytes); the slow-consumer caps deal with it.",
                 \.outboundPauseStuckMs, 1...3_600_000)),
        live(int("socket-send-buffer-bytes", "Kernel send buffer of each client connection (SO_SNDBUF, which Linux doubles); 0 leaves it to the kernel, which grows a slow client's to 4 MiB. Set, a slow client's backlog waits in its queue, where the slow-consumer caps and the total cap see it.",
                 \.socketSendBufferBytes, 0...(64 << 20))),
        live(int("outbound-shed-bytes", "Above this many bytes queued, a session gets no typing frames and unread updates wait, collapsed to the latest.",
                 \.outboundShedBytes, 0...(1 << 30))),
        live(int("outbound-soft-cap-bytes", "A session queued above this for outbound-soft-cap-ms is closed as a slow consumer.",
                 \.outboundSoftCapBytes, 0...(1 << 30))),
        live(int("outbound-soft-cap-ms", "See outbound-soft-cap-bytes.", \.outboundSoftCapMs, 0...3_600_000)),
        live(int("write-stall-ms", "A session with bytes queued and no write completing, or with over 64 KiB of events unacknowledged and no acknowledgement, for this long is cut as a slow consumer.",
                 \.writeStallMs, 100...3_600_000)),
        live(int("outbound-total-cap-bytes", "Bytes queued to all sessions together; past it the sessions with the most queued are cut first.",
                 \.outboundTotalCapBytes, 65_536...(1 << 40))),
        live(int("receipt-max-members", "Group read receipts only in servers with at most this many members (larger: the request fails).",
                 \.receiptMaxMembers, 0...100_000_000)),
        live(int("receipt-window-seconds", "A message older than this accepts no more receipt responses, and no receipt request.",
                 \.receiptWindowSeconds, 1...31_536_000)),
        live(choice("receipt-requesters", "Who may ask for group read receipts: all (members holding REQUEST_RECEIPTS) or admins (only those who also hold MANAGE_SERVER).",
                    \.receiptRequesters, ["all", "admins"])),
        live(choice("receipt-count-visibility", "Who sees a message's reader count: sender (only) or all (members).",
                    \.receiptCountVisibility, ["sender", "all"])),
        live(choice("delivery-receipts", "Whether senders of direct messages learn that a session of the recipient received them: on or off.",
                    \.deliveryReceipts, ["on", "off"])),
    ]

    private static func live(_ spec: SettingSpec) -> SettingSpec {
        var s = spec
        s.live = true
        return s
    }

    /// These settings with the live ones taken from `newer`; also returns the
    /// keys that changed but need a restart.
    public func applyingLive(_ newer: Settings) -> (Settings, restartNeeded: [String]) {
        var out = self
        var restart: [String] = []
        for spec in Self.specs where spec.get(self) != spec.get(newer) {
            if spec.live {
                try? spec.set(&out, spec.get(newer))
                out.sources[spec.key] = newer.sources[spec.key]
            } else {
                restart.append(spec.key)
            }
        }
        out.beneathAdmin = newer.beneathAdmin
        return (out, restart)
    }

    public static func spec(_ key: String) -> SettingSpec? { specs.first { $0.key == key } }

    public mutating func set(_ key: String, _ value: String) throws(SettingsError) {
        guard let spec = Self.spec(key) else {
            throw SettingsError(description: "unknown setting \"\(key)\"; `guildhall serve --print-config` lists them")
        }
        try spec.set(&self, value)
    }

    public func value(_ key: String) -> String? { Self.spec(key)?.get(self) }

    /// Reads a configuration file: `key = value` lines, `#` starts a comment.
    public mutating func apply(configFile text: String) throws(SettingsError) {
        for (number, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { continue }
            guard let eq = trimmed.firstIndex(of: "=") else {
                throw SettingsError(description: "config line \(number + 1): expected key = value")
            }
            let key = trimmed[..<eq].trimmingCharacters(in: .whitespaces)
            var value = trimmed[trimmed.index(after: eq)...].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            do { try set(key, value) } catch {
                throw SettingsError(description: "config line \(number + 1): \(error.description)")
            }
            sources[key] = "file"
        }
    }

    /// Applies GUILDHALL_* variables from `environment`.
    public mutating func apply(environment: [String: String]) throws(SettingsError) {
        for spec in Self.specs {
            if let value = environment[spec.environmentName] {
                do { try spec.set(&self, value) } catch {
                    throw SettingsError(description: "\(spec.environmentName): \(error.description)")
                }
                sources[spec.key] = "environment"
            }
        }
    }

    /// The annotated configuration file for these values.
    public func annotatedConfig() -> String {
        var out = "# Guildhall configuration. Every setting, its meaning and its current value.\n"
        out += "# Precedence: command-line flags, then GUILDHALL_* environment variables, then this file.\n\n"
        for spec in Self.specs {
            out += "# \(spec.doc)\(spec.live ? " Live: SIGHUP applies it." : "") (env \(spec.environmentName))\n\(spec.key) = \(spec.get(self))\n\n"
        }
        return out
    }

    // MARK: Table helpers

    private static func text(_ key: String, _ doc: String, _ path: WritableKeyPath<Settings, String> & Sendable,
                             check: @escaping @Sendable (String) throws(SettingsError) -> Void = { _ throws(SettingsError) in }) -> SettingSpec {
        SettingSpec(key: key, doc: doc, get: { $0[keyPath: path] }, set: { s, v throws(SettingsError) in
            try check(v)
            s[keyPath: path] = v
        })
    }

    private static func int(_ key: String, _ doc: String, _ path: WritableKeyPath<Settings, Int> & Sendable, _ range: ClosedRange<Int>) -> SettingSpec {
        SettingSpec(key: key, doc: doc + " Range \(range.lowerBound)-\(range.upperBound).", get: { String($0[keyPath: path]) }, set: { s, v throws(SettingsError) in
            guard let n = Int(v.replacingOccurrences(of: "_", with: "")), range.contains(n) else {
                throw SettingsError(description: "\(key) must be an integer in \(range.lowerBound)...\(range.upperBound), not \"\(v)\"")
            }
            s[keyPath: path] = n
        })
    }

    private static func choice(_ key: String, _ doc: String, _ path: WritableKeyPath<Settings, String> & Sendable, _ options: [String]) -> SettingSpec {
        SettingSpec(key: key, doc: doc, get: { $0[keyPath: path] }, set: { s, v throws(SettingsError) in
            guard let match = options.first(where: { $0.caseInsensitiveCompare(v) == .orderedSame }) else {
                throw SettingsError(description: "\(key) must be one of \(options.joined(separator: ", ")), not \"\(v)\"")
            }
            s[keyPath: path] = match
        })
    }
}

/// Checks "HOST:PORT" text without touching sockets.
enum SocketAddressText {
    static func isValid(_ text: String) -> Bool {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return false }
        return (0...65535).contains(port)
    }
}
