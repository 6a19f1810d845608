// The WebSocket door (README "Web client"): browsers connect to `ws-listen` and
// ask to upgrade at `/ws`. A connection starts as HTTP: its request is read
// (HTTPRequestReader, the admin endpoint's parser) and answered by the
// handshake (WebSocketHandshake), or with a web client file; upgraded, it is
// handed to the gateway, where it becomes a session like a TCP one, reading
// WebSocket messages (InboundFrames) and writing WebSocket frames
// (WebSocketFrameSink), binary protobuf or JSON text by subprotocol, under
// the same rules from login on. An upload's PUT goes to the file door
// (FileDoor.swift), which reads its body as it streams in, a download's
// GET to FileDownloads.swift, and a webhook's POST to WebhookDoor.swift. Every loop has one (SO_REUSEPORT), as for
// TCP. It owns the listener and the connections still greeting; the gateway
// is reached only through the hand-offs it was given. Loop thread only.

import GuildhallFiles
import GuildhallLoop

final class WebSocketDoor {
    /// The largest handshake request read, and its most headers.
    static let handshakeBytes = 8192, handshakeHeaders = 64

    private let loop: EventLoop
    /// The certificate, when the listener speaks TLS.
    private let certificates: TLSCertificates
    /// The gateway's parsed `trusted-proxies` (live).
    private let trustedProxies: () -> TrustedProxies
    /// The gateway's live settings (SIGHUP may change the origins and deadlines).
    private let settings: () -> Settings
    /// An upgraded connection, for the gateway to make a session of, with
    /// the client a trusted proxy named (nil: the connection's own peer).
    private let upgraded: (TCPConnection, WebSocketEncoding, String?) -> Void
    /// A connection closing, for the gateway to keep until libuv lets it go.
    private let closing: (TCPConnection) -> Void
    /// Uploads (FileDoor.swift) and downloads (FileDownloads.swift).
    private(set) var files: FileDoor!
    private(set) var downloads: FileDownloads!
    private(set) var webhooks: WebhookDoor!
    /// Milliseconds since the epoch (an upload URL's expiry).
    private let wallClock: () -> UInt64
    private var listener: TCPListener?
    /// Connections whose handshake is not done, and since when.
    private var greeting: [ObjectIdentifier: (connection: TCPConnection, since: UInt64)] = [:]
    private var shut = false

    init(loop: EventLoop, certificates: TLSCertificates, trustedProxies: @escaping () -> TrustedProxies, settings: @escaping () -> Settings,
         files storage: FileStorage?, metrics: NodeMetrics, wallClock: @escaping () -> UInt64, upgraded: @escaping (TCPConnection, WebSocketEncoding, String?) -> Void,
         closing: @escaping (TCPConnection) -> Void, deliverWebhook: @escaping (WebhookDelivery) -> Int?) {
        self.loop = loop
        self.wallClock = wallClock
        self.certificates = certificates
        self.trustedProxies = trustedProxies
        self.settings = settings
        self.upgraded = upgraded
        self.closing = closing
        files = FileDoor(store: storage?.local, settings: settings, metrics: metrics, answer: { [unowned self] c, response in self.refuse(c, response) })
        downloads = FileDownloads(storage: storage, settings: settings, metrics: metrics, finish: { [unowned self] c, response in self.refuse(c, response) })
        webhooks = WebhookDoor(maxContentBytes: { settings().maxBodyBytes }, deliver: deliverWebhook,
                               answer: { [unowned self] c, response in self.refuse(c, response) })
    }

    /// Starts listening when `ws-listen` is set (on `port` instead of the
    /// setting's beside the first loop's, sharing it).
    func listen(port override: Int? = nil, sharing: Bool) throws {
        let address = settings().wsListen
        guard !address.isEmpty else { return }
        guard let (host, port) = SocketAddress.split(address) else {
            throw SettingsError(description: "ws-listen must be HOST:PORT, not \(address)")
        }
        listener = try TCPListener(loop: loop, host: host, port: override ?? port, reusePort: sharing) { [unowned self] in
            self.greet($0)
        }
    }

    /// The port it bound (0 without a listener).
    var port: Int { listener?.port ?? 0 }

    /// Stops accepting; connections still greeting finish or time out.
    func stopAccepting() {
        shut = true
        listener?.close()
        listener = nil
    }

    /// Stops accepting and ends every handshake not done.
    func close() {
        stopAccepting()
        files.abandonAll()
        downloads.abandonAll()
        for g in greeting.values { refuse(g.connection, []) }
    }

    /// A new connection: a PROXY header from a trusted proxy, then its HTTP request.
    private func greet(_ c: TCPConnection) {
        guard !shut else { c.abort(); return }
        // Held here until the handshake ends: nothing else owns the connection yet.
        greeting[ObjectIdentifier(c)] = (c, loop.nowMillis)
        let reader = HTTPRequestReader(maxRequestBytes: Self.handshakeBytes, maxHeaders: Self.handshakeHeaders)
        let peer = c.peer, proxies = trustedProxies()
        var head: [UInt8] = [], client: String?
        // An upload streams its body to the file door as it arrives; a webhook's post to the webhook door.
        var upload: UInt64?, isUpload = false, post: UInt64?, isPost = false
        reader.streamsBody = { [unowned self, unowned c] request in
            if WebhookDoor.isPost(request) {
                isPost = true
                post = self.webhooks.begin(request, on: c)
                return true
            }
            guard FileDoor.isUpload(request) else { return false }
            isUpload = true
            upload = self.files.begin(request, on: c, now: self.loop.nowMillis, wallClock: self.wallClock())
            return true
        }
        reader.onBodyPiece = { [unowned self] bytes in
            if let upload { self.files.piece(upload, bytes) }
            if let post { self.webhooks.piece(post, bytes) }
        }
        // First a PROXY header, maybe; then TLS, maybe; then the HTTP request.
        let readRequest = { [unowned self, unowned c] (bytes: UnsafeRawBufferPointer) in
            do throws(HTTPReadError) {
                guard let request = try reader.feed(bytes).first else { return }
                if isUpload {
                    // Its body is whole (or it was answered at its head, and the connection is closing).
                    if let upload, !c.closed {
                        c.stopReading()
                        self.files.bodyEnded(upload)
                    }
                    return
                }
                if isPost {
                    if let post, !c.closed {
                        c.stopReading()
                        self.webhooks.bodyEnded(post, now: self.loop.nowMillis)
                    }
                    return
                }
                c.stopReading()
                // An HTTP proxy in front names the client in X-Forwarded-For (heeded from trusted proxies only).
                if proxies.trusts(peer), let forwarded = request.header("X-Forwarded-For"), let named = proxies.client(forwardedFor: forwarded) {
                    client = IPAddress(named).map { $0.withPort(0) } ?? client
                }
                self.handshake(request, on: c, client: client)
            } catch {
                self.refuse(c, WebSocketHandshake.refusal(error.status, "the handshake could not be read: \(error)"))
            }
        }
        c.onRead = { [unowned self, unowned c] bytes in
            head += bytes
            let start: Int
            switch ProxyHeader.decide(head, peer: peer, trusted: proxies.trusts(peer)) {
            case .needMore: return
            case .refuse(let why): return self.refuse(c, WebSocketHandshake.refusal(400, why))
            case .proceed(let source, let from):
                client = source
                start = from
            }
            c.onRead = readRequest
            head[start...].withUnsafeBytes { rest in
                if self.settings().tlsWebSocket == "on" {
                    guard let tls = self.certificates.stream() else { return self.refuse(c, []) }
                    c.startTLS(tls, early: rest)
                } else if !rest.isEmpty {
                    readRequest(rest)
                }
            }
        }
        c.onEnd = { [unowned self, unowned c] _ in
            if let upload { self.files.abandoned(upload) }
            self.downloads.abandoned(c)
            self.webhooks.abandoned(c)
            self.refuse(c, [])
        }
        c.startReading()
    }

    /// Handshakes not done within the login deadline are ended (slowloris before the first frame).
    func endSlowHandshakes(now: UInt64) {
        let deadline = UInt64(settings().loginDeadlineMs)
        files.cutSlow(now: now)
        downloads.cutStalled()
        for (_, g) in greeting where now >= g.since + deadline && !files.isUploading(g.connection) && !downloads.isDownloading(g.connection) {
            webhooks.abandoned(g.connection)
            refuse(g.connection, WebSocketHandshake.refusal(408, "the handshake took too long"))
        }
    }

    private func handshake(_ r: HTTPRequest, on c: TCPConnection, client: String?) {
        if FileDownloads.isDownload(r) { return downloads.begin(r, on: c, wallClock: wallClock()) }
        let settings = settings()
        if settings.webClient == "on", r.path != WebSocketHandshake.path, let page = WebClientPages.response(to: r) {
            return refuse(c, page)
        }
        switch WebSocketHandshake.answer(r, origins: AllowedOrigins(settings.wsAllowedOrigins)) {
        case .refuse(_, let response):
            refuse(c, response)
        case .upgrade(let encoding, let response):
            greeting.removeValue(forKey: ObjectIdentifier(c))
            c.enqueue(response)
            c.flush()
            c.onRead = nil
            c.onEnd = nil
            upgraded(c, encoding, client)
        }
    }

    /// Answers a connection that does not become a WebSocket (a refusal, or a web client file), then closes it.
    private func refuse(_ c: TCPConnection, _ response: [UInt8]) {
        guard greeting.removeValue(forKey: ObjectIdentifier(c)) != nil else { return }
        c.onRead = nil
        c.onEnd = nil
        if !response.isEmpty { c.enqueue(response) }
        closing(c)
        c.close()
    }
}
