# The WebSocket listener against an independent, strict peer: Python's
# `websockets` (README "Web client"). Handshakes accepted and refused, both
# subprotocols, fragments, ping/pong, size and protocol violations and their
# close codes, Guildhall's close reasons as close codes, and a TCP client
# (`guildhall client --json`) chatting with a WebSocket client.
import json
import os
import select
import socket
import subprocess
import time

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from conftest import BINARY, UNLIMITED, JsonPeer, RequestFailed, mint_token

# Guildhall's close reasons, as WebSocket close codes: 4000 + the reason's number.
LOGGED_OUT, AUTH_FAILED, LOGIN_TIMEOUT = 4009, 4006, 4002


def raw_handshake(server, key="dGhlIHNhbXBsZSBub25jZQ==", protocol="guildhall.json"):
    """A bare socket's handshake: returns the socket and the response's head."""
    s = socket.create_connection(("127.0.0.1", server.ws_port), timeout=10)
    s.sendall((f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{server.ws_port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    return s, head.decode(errors="replace")


def read_close(s, timeout=10):
    """Reads server frames until a close; returns its code (None if the stream ends without one)."""
    buffer = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        while len(buffer) >= 2:
            length, at = buffer[1] & 0x7F, 2
            if length == 126:
                length, at = int.from_bytes(buffer[2:4], "big"), 4
            elif length == 127:
                length, at = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < at + length:
                break
            opcode, payload = buffer[0] & 0x0F, buffer[at:at + length]
            buffer = buffer[at + length:]
            if opcode == 0x8:
                return int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
        ready, _, _ = select.select([s], [], [], max(0.0, deadline - time.time()))
        chunk = s.recv(65536) if ready else b""
        if not chunk:
            return None
        buffer += chunk
    return None


@pytest.mark.parametrize("protocol", ["guildhall.proto", "guildhall.json"])
def test_the_handshake_chooses_the_subprotocol_offered(server, protocol):
    with connect(server.ws_url, subprotocols=["chat", protocol], open_timeout=10) as ws:
        assert ws.subprotocol == protocol


def test_handshakes_are_refused_for_a_bad_origin_no_subprotocol_or_a_bad_key(server):
    with pytest.raises(InvalidStatus) as origin:
        connect(server.ws_url, subprotocols=["guildhall.json"], origin="https://elsewhere.example", open_timeout=10)
    assert origin.value.response.status_code == 403
    with pytest.raises(InvalidStatus) as none:
        connect(server.ws_url, open_timeout=10)
    assert none.value.response.status_code == 400
    s, head = raw_handshake(server, key="c2hvcnQ=")
    s.close()
    assert head.startswith("HTTP/1.1 400 "), head
    # The page's own origin is admitted (ws-allowed-origins empty: the listener's host).
    with connect(server.ws_url, subprotocols=["guildhall.json"], origin=f"http://127.0.0.1:{server.ws_port}", open_timeout=10) as ws:
        assert ws.subprotocol == "guildhall.json"


def test_json_login_sends_requests_and_events_in_the_proto3_mapping(server):
    alice = JsonPeer(server, "alice")
    assert alice.login["userId"] == "alice" and alice.login["sessionId"]
    created = alice.request({"createServer": {"name": "Web"}})["server"]
    assert isinstance(created["serverId"], str), "64-bit ids are strings in proto3 JSON"
    channel = alice.request({"createChannel": {"serverId": created["serverId"], "name": "general"}})["channel"]
    with pytest.raises(RequestFailed) as missing:
        alice.request({"listChannels": {"serverId": "12345"}})
    assert missing.value.error["code"] == "NOT_FOUND"
    alice.request({"subscribe": {"type": "CHANNEL_MSG", "targets": [{"serverId": created["serverId"], "channelId": channel["channelId"]}]}})
    sent = alice.request({"sendMessage": {"channelId": channel["channelId"], "body": {"text": "héllo ✓"}}})["message"]
    assert sent["body"]["text"] == "héllo ✓"
    alice.close()


def test_a_fragmented_message_is_one_frame(server):
    with connect(server.ws_url, subprotocols=["guildhall.json"], open_timeout=10) as ws:
        text = json.dumps({"request": {"id": "1", "login": {"token": server.token("alice")}}})
        third = len(text) // 3
        ws.send(iter([text[:third], text[third:2 * third], text[2 * third:]]))
        answer = json.loads(ws.recv(timeout=10))
        assert answer["response"]["login"]["userId"] == "alice"


def test_a_ping_is_answered_with_a_pong(server):
    with connect(server.ws_url, subprotocols=["guildhall.proto"], open_timeout=10) as ws:
        assert ws.ping(b"are you there").wait(10)


def test_an_oversize_message_closes_with_1009(server):
    with connect(server.ws_url, subprotocols=["guildhall.json"], open_timeout=10, max_size=None) as ws:
        ws.send("x" * 5000)  # over the 4 KiB allowed before login
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    peer = JsonPeer(server, "alice")
    peer.ws.send(json.dumps({"request": {"id": "9", "heartbeat": {}}, "pad": "y" * 70000}))  # over 64 KiB after login
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            peer.receive(timeout=10)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


def test_an_unmasked_client_frame_closes_with_1002(server):
    s, head = raw_handshake(server)
    assert head.startswith("HTTP/1.1 101 "), head
    payload = b'{"request":{"id":"1","heartbeat":{}}}'
    s.sendall(bytes([0x81, len(payload)]) + payload)  # a client frame without the mask bit
    assert read_close(s) == 1002
    s.close()


def test_close_codes_carry_guildhalls_close_reasons(server):
    peer = JsonPeer(server, "alice")
    peer.send({"request": {"id": "5", "logout": {}}})
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            peer.receive(timeout=10)
    assert closed.value.rcvd.code == LOGGED_OUT and "log" in closed.value.rcvd.reason.lower()
    assert any(e.get("closed", {}).get("reason") == "LOGGED_OUT" for e in peer.events)

    forged = JsonPeer(server)
    forged.send({"request": {"id": "1", "login": {"token": mint_token("not-the-secret", "mallory")}}})
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            forged.receive(timeout=10)
    assert closed.value.rcvd.code == AUTH_FAILED
    assert forged.responses["1"]["error"]["code"] == "UNAUTHENTICATED"


def test_login_deadline_closes_with_its_reason(tmp_path):
    from conftest import Server
    server = Server(tmp_path / "data", settings=["login-deadline-ms=300"])
    try:
        with connect(server.ws_url, subprotocols=["guildhall.json"], open_timeout=10) as ws:
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    ws.recv(timeout=10)
            assert closed.value.rcvd.code == LOGIN_TIMEOUT
    finally:
        server.stop()


class CliClient:
    """`guildhall client --json` over TCP: one JSON command a line in, one JSON object a line out."""

    def __init__(self, server, user):
        self.process = subprocess.Popen([BINARY, "client", "--json", "--server", f"127.0.0.1:{server.port}", "--token", server.token(user, "cli")],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lines = []
        self.partial = b""
        self.wait(lambda o: o.get("event") == "status" or o.get("cmd") == "login")

    def command(self, cmd, **args):
        self.process.stdin.write((json.dumps({"cmd": cmd, **args}) + "\n").encode())
        self.process.stdin.flush()
        answer = self.wait(lambda o: o.get("cmd") == cmd)
        assert answer["ok"], answer
        return answer.get("result", {})

    def wait(self, matching, timeout=10):
        deadline = time.time() + timeout
        while True:
            for o in self.lines:
                if matching(o):
                    self.lines.remove(o)
                    return o
            fd = self.process.stdout.fileno()
            ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.time()))
            if not ready:
                raise TimeoutError("no such line from the CLI client")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("the CLI client ended")
            self.partial += chunk
            *whole, self.partial = self.partial.split(b"\n")
            self.lines += [json.loads(line) for line in whole if line.strip()]

    def stop(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def test_a_tcp_client_and_a_websocket_client_chat_each_hearing_each_message_once(server):
    alice = CliClient(server, "alice")
    try:
        created = alice.command("create-server", name="Mixed")["serverId"]
        channel = alice.command("create-channel", server=created, name="general")["channelId"]
        alice.command("subscribe", type="channel_msg", server=created, channels=channel)
        bob = JsonPeer(server, "bob")
        bob.request({"joinServer": {"serverId": created}})
        bob.request({"subscribe": {"type": "CHANNEL_MSG", "targets": [{"serverId": created, "channelId": channel}]}})

        from_tcp = alice.command("send", channel=channel, text="hello from TCP")["uid"]
        heard = bob.event("message", where=lambda m: m["uid"] == from_tcp)
        assert heard["message"]["body"]["text"] == "hello from TCP" and int(heard["seq"]) > 0
        from_ws = bob.request({"sendMessage": {"channelId": channel, "body": {"text": "hello from the browser"}}})["message"]["uid"]
        alice.wait(lambda o: o.get("event") == "message" and o["data"]["uid"] == from_ws)

        # Nothing twice (and no one hears their own): a last message from each side, then count what arrived.
        last_tcp = alice.command("send", channel=channel, text="last from TCP")["uid"]
        bob.event("message", where=lambda m: m["uid"] == last_tcp)
        last_ws = bob.request({"sendMessage": {"channelId": channel, "body": {"text": "last from the browser"}}})["message"]["uid"]
        alice.wait(lambda o: o.get("event") == "message" and o["data"]["uid"] == last_ws)
        heard_by_bob = [e["message"]["uid"] for e in bob.events if "message" in e]
        assert from_tcp not in heard_by_bob and from_ws not in heard_by_bob, "each message once"
        assert not [o for o in alice.lines if o.get("event") == "message" and o["data"]["uid"] in (from_ws, from_tcp)]
        bob.close()
    finally:
        alice.stop()


def test_the_same_rules_as_tcp_heartbeats(tmp_path):
    from conftest import Server
    server = Server(tmp_path / "data", settings=["idle-timeout-ms=400", "heartbeat-interval-ms=150"])
    try:
        peer = JsonPeer(server, "alice")
        assert peer.login["heartbeatIntervalMs"] == 150
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                peer.receive(timeout=10)
        assert closed.value.rcvd.code == 4003  # HEARTBEAT_TIMEOUT
    finally:
        server.stop()


def test_offline_sync_reaches_a_websocket_session(server):
    bob = JsonPeer(server, "bob")
    bob.close()
    alice = JsonPeer(server, "alice")
    sent = alice.request({"sendDirectMessage": {"peerId": "bob", "body": {"text": "while you were away"}}})["message"]
    bob = JsonPeer(server, "bob")
    item = bob.event("message")
    assert item["message"]["uid"] == sent["uid"] and item["offline"] is True and item["cursor"] and not item.get("left")
    # The last item of a package is acknowledged; then the sync completes.
    bob.send({"request": {"id": "99", "ack": {"eventSeq": item["seq"]}}})
    bob.event("syncCompleted")


def test_a_slow_websocket_consumer_is_cut_and_resumes_without_loss(tmp_path):
    from conftest import Server
    # The replay buffer holds all ~10 MB sent (resume-bytes), so the resume replays rather than names gaps.
    server = Server(tmp_path / "data", settings=["outbound-hard-cap-bytes=65536", "resume-bytes=33554432"] + UNLIMITED)
    try:
        alice = JsonPeer(server, "alice")
        created = alice.request({"createServer": {"name": "Flood", "openJoin": True}})["server"]["serverId"]
        channel = alice.request({"createChannel": {"serverId": created, "name": "general"}})["channel"]["channelId"]
        target = [{"serverId": created, "channelId": channel}]
        # bob reads nothing: a small socket buffer, and websockets stops reading once one message waits.
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", server.ws_port))
        bob = JsonPeer(server, None, sock=sock, max_queue=1)
        login = bob.request({"login": {"token": server.token("bob")}})["login"]
        bob.request({"joinServer": {"serverId": created}})
        bob.request({"subscribe": {"type": "CHANNEL_MSG", "targets": target}})
        sent = []
        # More than the kernel's buffers on both sides of a loopback connection hold (several MiB).
        for i in range(1200):
            sent.append(alice.request({"sendMessage": {"channelId": channel, "body": {"text": f"{i:04} " + "x" * 8000}}})["message"]["uid"])
        heard = []
        with pytest.raises(ConnectionClosed):
            while True:
                frame = bob.receive(timeout=20)
                if "message" in frame.get("event", {}):
                    heard.append(frame["event"]["message"]["uid"])
        assert len(heard) < len(sent), "bob was cut before he had everything"
        last_seq = max([int(e.get("seq", 0)) for e in bob.events] + [0])
        again = JsonPeer(server)
        answer = again.request({"resume": {"token": server.token("bob"), "sessionId": login["sessionId"], "lastEventSeq": str(last_seq)}})["login"]
        assert answer["resumed"] is True and answer["previousCloseReason"] == "SLOW_CONSUMER"
        again.event("resumed", timeout=20)
        heard += [e["message"]["uid"] for e in again.events if "message" in e]
        assert heard == sent, "every message once, in order, across the cut"
    finally:
        server.stop()
