// Abuse limits at the gateway (docs/protocol.md, docs/reliability.md): requests per
// second per session by the request table's rate class, failed logins per
// user and per peer address, and the node's connection cap. The budgets are
// kept in GuildhallCore (`RequestBudget`, `LoginFailures`); this file holds
// the rates as the live settings give them, and what the node's gateways
// share: the count of connections and the failed logins. Those two are the
// only state loops share outside messages: a connection or a failed login
// on one loop must count on every loop at once, and each is touched once per
// connection or login, never per request.

import Glibc
import GuildhallCore
import GuildhallFiles
import GuildhallLoop
import Synchronization

/// What every gateway of a node shares.
final class NodeGuard: Sendable {
    let connections = ConnectionCount()
    /// What the node's loops hold queued, for the total cap (OutboundBounds.swift).
    let outbound: NodeOutbound
    /// The node's metrics (NodeMetrics.swift).
    let metrics: NodeMetrics
    /// In a cluster, the shards this node serves now, and where every home is.
    let served: ServedShards
    let cluster: ClusterView
    /// The other nodes (in a cluster).
    let bus: NodeBus?
    /// The keys JWT logins are verified with (TokenKeys.swift).
    let tokenKeys = TokenKeys()
    /// The certificate TLS listeners present (TLSCertificates.swift).
    let certificates = TLSCertificates()
    /// Where files are kept (docs/files.md), shared by every loop's home and listener.
    let files: FileStorage?
    /// Where push notices go (PushGateway.swift); nil without push-gateway-url.
    let push: PushGateway?

    init(loops: Int, metrics: NodeMetrics, served: ServedShards, cluster: ClusterView, bus: NodeBus? = nil, files: FileStorage? = nil,
         push: PushGateway? = nil) {
        self.metrics = metrics
        self.files = files
        self.push = push
        outbound = NodeOutbound(loops: loops)
        self.served = served
        self.cluster = cluster
        self.bus = bus
    }
    private let failures = Mutex((users: LoginFailures(), peers: LoginFailures()))
    /// An address gets ten times a user's budget, refilled ten times as
    /// fast: one account guessed at from one address is held to the user's
    /// budget, while the address's other users (a shared NAT) still get in
    /// unless it tries many accounts.
    static let addressFactor = 10

    /// Milliseconds before `user` (when the token names one) and `peer` may fail a login again; 0 when both may.
    func loginWait(user: UserID?, peer: String, now: UInt64, burst: Int, intervalMs: UInt64) -> UInt64 {
        failures.withLock { f in
            max(user.map { f.users.wait($0, now: now, burst: burst, intervalMs: intervalMs) } ?? 0,
                f.peers.wait(peer, now: now, burst: burst * Self.addressFactor, intervalMs: intervalMs / UInt64(Self.addressFactor)))
        }
    }

    func loginFailed(user: UserID?, peer: String, now: UInt64, intervalMs: UInt64) {
        failures.withLock { f in
            if let user { f.users.failed(user, now: now, intervalMs: intervalMs) }
            f.peers.failed(peer, now: now, intervalMs: intervalMs / UInt64(Self.addressFactor))
        }
    }
}

/// A gateway's limits as its settings give them.
final class GatewayLimits {
    let node: NodeGuard
    private(set) var rates: RequestBudget.Rates
    /// `max-connections`, kept below the open-file limit (less 64 for the store, listeners and logs).
    private(set) var connectionCap: Int
    /// Who may name the client of a connection it carries (`trusted-proxies`).
    private(set) var proxies: TrustedProxies
    private let fileLimit: Int

    init(_ settings: Settings, node: NodeGuard) {
        self.node = node
        var limit = rlimit()
        fileLimit = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 && limit.rlim_cur < rlim_t(Int.max)
            ? Int(limit.rlim_cur) - 64 : Int.max
        rates = Self.rates(settings)
        connectionCap = min(settings.maxConnections, max(fileLimit, 1))
        proxies = (try? TrustedProxies(settings.trustedProxies)) ?? .none
    }

    func update(_ settings: Settings) {
        rates = Self.rates(settings)
        connectionCap = min(settings.maxConnections, max(fileLimit, 1))
        if let trusted = try? TrustedProxies(settings.trustedProxies) { proxies = trusted }
    }

    private static func rates(_ s: Settings) -> RequestBudget.Rates {
        var perSecond = Array(repeating: 0, count: RateClass.allCases.count)
        for c in RateClass.allCases {
            perSecond[c.index] = switch c {
            case .session: s.rateSession
            case .query: s.rateQueries
            case .change: s.rateChanges
            case .message: s.rateMessages
            case .typing: s.rateTyping
            }
        }
        return RequestBudget.Rates(perSecond)
    }
}

extension RateClass {
    var index: Int {
        switch self {
        case .session: 0
        case .query: 1
        case .change: 2
        case .message: 3
        case .typing: 4
        }
    }
}
