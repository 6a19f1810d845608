/**
 * Guildhall's protocol for browsers, as an ES module with no dependencies
 * (docs/web-client.md, "The JavaScript SDK"). One WebSocket to /ws speaking
 * `guildhall.json`: each message is one `Frame` of Proto/guildhall.proto in
 * proto3's JSON mapping (64-bit numbers are strings, enums are their names).
 *
 * It logs in with a token, answers each request's promise, heartbeats,
 * acknowledges events, reports direct messages delivered, drops duplicate
 * inbox items by cursor, and after a dropped connection reconnects and
 * resumes the session (the server replays what was missed and keeps the
 * subscriptions) or, when it cannot, logs in afresh and says so (`fresh`).
 * No DOM here: the web client's modules listen to the events it dispatches.
 * Its types, and every request and event name, are in guildhall.d.ts.
 *
 * Events (listen with addEventListener; each is a CustomEvent):
 * - "state": detail {state: "connecting" | "connected" | "reconnecting" | "closed", reason?}
 * - "ready": detail {login, fresh}: signed in; `fresh` is a new session (subscriptions are gone: make them again)
 * - one per server event body ("message", "unreadChanged", "typing", "presence", "notification", ...):
 *   detail {body, event}, `body` the event's body and `event` the whole Event (seq, unread, offline, ...).
 *
 * @example
 * import { GuildhallConnection } from "/guildhall.js";
 * const gh = new GuildhallConnection({ url: `wss://${location.host}/ws`, token });
 * gh.addEventListener("message", ({ detail }) => console.log(detail.body.body.text));
 * gh.addEventListener("ready", async () => {
 *   await gh.request({ subscribe: { type: "CHANNEL_MSG", operation: "SUBSCRIBE", targets: [{ serverId, channelId }] } });
 *   await gh.request({ sendMessage: { channelId, body: { text: "hello" } } });
 * });
 * gh.connect();
 */

const TERMINAL = new Set(["REPLACED", "AUTH_FAILED", "LOGGED_OUT"]);

/** A connection to Guildhall that keeps itself signed in. */
export class GuildhallConnection extends EventTarget {
  /**
   * @param {object} options
   * @param {string} options.url the WebSocket URL, `ws(s)://HOST/ws`
   * @param {string} options.token a login token (a JWT or a v1 token, minted by the application's backend)
   * @param {boolean} [options.deliveryReceipts=true] report direct messages delivered as they arrive
   * @param {number} [options.loginTimeoutMs=15000] how long to wait for the login's answer before trying again
   */
  constructor({ url, token, deliveryReceipts = true, loginTimeoutMs = 15000 }) {
    super();
    this.url = url;
    this.token = token;
    this.deliveryReceipts = deliveryReceipts;
    this.loginTimeoutMs = loginTimeoutMs;
    this.state = "closed";
    this.login = null;
    this.sessionId = null;
    this.lastSeq = 0n;
    this.ackedSeq = 0n;
    this.cursorSeen = 0n;
    this.nextId = 1;
    this.pending = new Map();
    this.receivedUpTo = new Map();
    this.retries = 0;
    this.stopped = false;
  }

  /** Connects and signs in; "ready" follows, and again after each reconnection. */
  connect() {
    this.stopped = false;
    this.open();
  }

  /** Logs out: the session ends for good (no reconnection); "state" says closed. */
  logout() {
    this.stopped = true;
    this.request({ logout: {} }).catch(() => {});
  }

  /**
   * Sends one request and waits for its answer.
   * @param {object} body one field named for the request kind, e.g. `{ sendMessage: { channelId, body: { text } } }`
   * @param {number} [timeoutMs=15000] how long to wait for the answer
   * @returns {Promise<object>} the result, one field named for its kind (e.g. `{ message: {...} }`);
   *   rejected with `{code, message}`: the server's error code (e.g. "NOT_FOUND"), or "UNAVAILABLE" and "TIMEOUT"
   */
  request(body, timeoutMs = 15000) {
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN || !this.login) {
        reject({ code: "UNAVAILABLE", message: "not connected" });
        return;
      }
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject({ code: "TIMEOUT", message: "no answer in time" });
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
      this.send({ request: { id, ...body } });
    });
  }

  /** @private */
  send(frame) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(frame));
  }

  /** @private */
  setState(state, reason) {
    this.state = state;
    this.dispatchEvent(new CustomEvent("state", { detail: { state, reason } }));
  }

  /** @private */
  open() {
    this.setState(this.sessionId ? "reconnecting" : "connecting");
    const ws = new WebSocket(this.url, ["guildhall.json"]);
    this.ws = ws;
    this.login = null;
    ws.onopen = () => {
      const first = this.sessionId
        ? { resume: { token: this.token, sessionId: this.sessionId, lastEventSeq: String(this.lastSeq), clientVersion: "guildhall-web/1" } }
        : { login: { token: this.token, clientVersion: "guildhall-web/1" } };
      ws.send(JSON.stringify({ request: { id: "0", ...first } }));
      // A login nobody answers (a node that hangs, a proxy holding a dead
      // backend's connection) is given up like a request, and tried again.
      clearTimeout(this.loginTimer);
      this.loginTimer = setTimeout(() => {
        if (this.ws !== ws || this.login) return;
        this.closeReason = "the login was not answered in time";
        ws.close();
      }, this.loginTimeoutMs);
    };
    ws.onmessage = (m) => this.received(JSON.parse(m.data));
    ws.onclose = (c) => this.closed(c);
  }

  /** @private */
  received(frame) {
    if (frame.response) return this.answered(frame.response);
    if (frame.event) return this.eventReceived(frame.event);
  }

  /** @private */
  answered(r) {
    if (r.id === "0" || r.id === undefined) {
      if (r.login) return this.loggedIn(r.login);
      // UNAVAILABLE: no node serves the account for a moment (its home is
      // moving between nodes); the close that follows is retried with backoff.
      if (r.error && r.error.code !== "UNAVAILABLE") {
        this.stopped = true;
        this.closeReason = r.error.message;
      }
      return;
    }
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    clearTimeout(p.timer);
    if (r.error) p.reject({ code: r.error.code, message: r.error.message });
    else {
      const { id, ...result } = r;
      p.resolve(result);
    }
  }

  /** @private */
  loggedIn(login) {
    const fresh = !login.resumed;
    if (fresh) {
      this.lastSeq = 0n;
      this.ackedSeq = 0n;
    }
    clearTimeout(this.loginTimer);
    this.login = login;
    this.sessionId = login.sessionId;
    this.retries = 0;
    const beat = Math.max(1000, Number(login.heartbeatIntervalMs || 30000) / 2);
    clearInterval(this.ticker);
    this.lastAck = Date.now();
    this.ticker = setInterval(() => this.tick(beat), 500);
    this.lastBeat = Date.now();
    this.setState("connected");
    this.dispatchEvent(new CustomEvent("ready", { detail: { login, fresh } }));
  }

  /** @private */
  tick(beatMs) {
    const now = Date.now();
    if (now - this.lastAck >= 1000) this.acknowledge();
    if (now - this.lastBeat >= beatMs) {
      this.lastBeat = now;
      this.send({ request: { id: String(this.nextId++), heartbeat: { lastEventSeq: String(this.lastSeq) } } });
    }
  }

  /** @private */
  acknowledge() {
    this.lastAck = Date.now();
    if (this.lastSeq <= this.ackedSeq) return;
    this.ackedSeq = this.lastSeq;
    const received = [...this.receivedUpTo].map(([channelId, seq]) => ({ channelId, seq: String(seq) }));
    this.receivedUpTo.clear();
    this.send({ request: { id: String(this.nextId++), ack: { eventSeq: String(this.lastSeq), received } } });
  }

  /** @private */
  eventReceived(e) {
    if (e.seq) this.lastSeq = BigInt(e.seq);
    const { seq, unread, offline, left, morePackages, cursor, ...rest } = e;
    const kind = Object.keys(rest)[0];
    if (!kind) return;
    const body = rest[kind];
    if (kind === "closed") {
      this.closeReason = body.message;
      if (TERMINAL.has(body.reason)) this.stopped = true;
    }
    if (kind === "message" && body.serverId && body.serverId !== "0") {
      const upTo = this.receivedUpTo.get(body.channelId) || 0n;
      if (BigInt(body.seq || 0) > upTo) this.receivedUpTo.set(body.channelId, BigInt(body.seq || 0));
    }
    // A direct message to this user: theirs in a pair, or another member's in a group (which names no recipient).
    const direct = kind === "message" && (!body.serverId || body.serverId === "0") && !body.sentStatus;
    const toMe = this.login && (body.recipientId ? body.recipientId === this.login.userId : body.senderId !== this.login.userId);
    if (direct && toMe && this.deliveryReceipts) {
      this.send({ request: { id: String(this.nextId++), markDelivered: { messageUids: [body.uid] } } });
    }
    if (cursor) {
      const c = BigInt(cursor);
      if (c <= this.cursorSeen) return;
      this.cursorSeen = c;
    }
    if (offline && !left) this.acknowledge();
    this.dispatchEvent(new CustomEvent(kind, { detail: { body, event: e } }));
  }

  /** @private */
  closed(c) {
    clearInterval(this.ticker);
    clearTimeout(this.loginTimer);
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject({ code: "UNAVAILABLE", message: "connection lost" });
    }
    this.pending.clear();
    this.login = null;
    if (this.stopped) {
      this.sessionId = null;
      return this.setState("closed", this.closeReason || c.reason || `closed (${c.code})`);
    }
    const delay = Math.min(10000, 500 * 2 ** this.retries++);
    this.setState("reconnecting", this.closeReason || c.reason || "connection lost");
    this.closeReason = null;
    this.reconnectTimer = setTimeout(() => this.open(), delay);
  }
}

/** The unread badge's text: the exact count, or "99+" above the server's display cap. */
export function badgeText(count, cap) {
  const n = Number(count || 0), max = Number(cap || 99);
  if (n <= 0) return "";
  return n > max ? `${max}+` : String(n);
}
