// The WebSocket listener (README "Web client"): browsers connect to `ws-listen` and
// ask to upgrade at `/ws`. A connection starts as HTTP: its request is read
// (HTTPRequestReader, the admin endpoint's parser) and answered by the
// handshake (WebSocketHandshake); upgraded, it becomes a session like a TCP
// one, reading WebSocket messages (InboundFrames) and writing WebSocket
// frames (FrameSink), binary protobuf or JSON text by subprotocol, under the
// same rules from login on. Every loop listens (SO_REUSEPORT), as for TCP. Loop thread only.

import GuildhallLoop

extension Gateway {
    /// The largest handshake request read, and its most headers.
    static let handshakeBytes = 8192, handshakeHeaders = 64

    /// Starts the WebSocket listener when `ws-listen` is set (on `port`
    /// instead of the setting's beside the first loop's, sharing it).
    func listenWebSocket(port override: Int? = nil, sharing: Bool) throws {
        guard !settings.wsListen.isEmpty else { return }
        guard let (host, port) = SocketAddress.split(settings.wsListen) else {
            throw SettingsError(description: "ws-listen must be HOST:PORT, not \(settings.wsListen)")
        }
        webSocketListener = try TCPListener(loop: loop, host: host, port: override ?? port, reusePort: sharing) { [unowned self] in
            self.greet($0)
        }
    }

    /// The port the WebSocket listener bound (0 without one).
    var webSocketPort: Int { webSocketListener?.port ?? 0 }

    /// A new connection to the WebSocket listener: its HTTP request first.
    private func greet(_ c: TCPConnection) {
        guard !shuttingDown else { c.abort(); return }
        // Held here until the handshake ends: nothing else owns the connection yet.
        greeting[ObjectIdentifier(c)] = (c, loop.nowMillis)
        let reader = HTTPRequestReader(maxRequestBytes: Self.handshakeBytes, maxHeaders: Self.handshakeHeaders)
        c.onRead = { [unowned self, unowned c] bytes in
            do throws(HTTPReadError) {
                guard let request = try reader.feed(bytes).first else { return }
                c.stopReading()
                self.handshake(request, on: c)
            } catch {
                self.refuse(c, WebSocketHandshake.refusal(error.status, "the handshake could not be read: \(error)"))
            }
        }
        c.onEnd = { [unowned self, unowned c] _ in self.refuse(c, []) }
        c.startReading()
    }

    /// Handshakes not done within the login deadline are ended (slowloris before the first frame).
    func endSlowHandshakes(now: UInt64) {
        for (_, g) in greeting where now >= g.since + UInt64(settings.loginDeadlineMs) {
            refuse(g.connection, WebSocketHandshake.refusal(408, "the handshake took too long"))
        }
    }

    private func handshake(_ r: HTTPRequest, on c: TCPConnection) {
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
            _ = accepted(c, webSocket: encoding)
        }
    }

    /// Answers a connection that does not become a WebSocket (a refusal, or a web client file), then closes it.
    func refuse(_ c: TCPConnection, _ response: [UInt8]) {
        guard greeting.removeValue(forKey: ObjectIdentifier(c)) != nil else { return }
        c.onRead = nil
        c.onEnd = nil
        if !response.isEmpty { c.enqueue(response) }
        linger(c)
        c.close()
    }
}
