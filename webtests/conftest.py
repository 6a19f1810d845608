# Shared fixtures of the WebSocket protocol tests and the browser tests
# (README "Web client"): a real `guildhall serve` on 127.0.0.1 free ports in a
# temporary folder, stopped by its PID; tokens minted the way a web app's
# backend mints them (docs/security.md, "The v1 token"); a JSON WebSocket peer.
import base64
import hashlib
import hmac
import json
import os
import select
import subprocess
import time

import pytest
from websockets.sync.client import connect

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.environ.get("GUILDHALL_BINARY", os.path.join(ROOT, ".build", "debug", "guildhall"))
SECRET = "webtests-secret"
# The abuse limits off (Settings.unlimited), for a test that sends faster than a person.
UNLIMITED = ["rate-session=0", "rate-queries=0", "rate-changes=0", "rate-messages=0", "rate-typing=0",
             "login-failure-interval-ms=0", "max-connections=10000000"]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint_token(secret: str, user: str, device: str = "web", ttl: int = 3600) -> str:
    """A login token, as a web app's backend mints it: HMAC-SHA256 over "v1\\n<user>\\n<device>\\n<expiry>"."""
    expiry = int(time.time()) + ttl
    mac = hmac.new(secret.encode(), f"v1\n{user}\n{device}\n{expiry}".encode(), hashlib.sha256).digest()
    return ".".join(["v1", b64url(user.encode()), b64url(device.encode()), str(expiry), b64url(mac)])


class Server:
    """`guildhall serve` with its client and WebSocket listeners on free loopback ports."""

    def __init__(self, folder, settings=()):
        args = [BINARY, "serve", "--data", str(folder), "--listen", "127.0.0.1:0",
                "--set", f"secret={SECRET}", "--set", "admin-listen=", "--set", "ws-listen=127.0.0.1:0",
                "--set", "log-level=warn"]
        for s in settings:
            args += ["--set", s]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.port = self.ws_port = None
        deadline = time.time() + 30
        text = ""
        fd = self.process.stdout.fileno()
        while self.ws_port is None:
            left = deadline - time.time()
            if left <= 0 or self.process.poll() is not None:
                self.stop()
                raise RuntimeError(f"the server did not start: {text!r}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                text += os.read(fd, 4096).decode()
                for line in text.splitlines():
                    if line.startswith("guildhall listening on 127.0.0.1:"):
                        self.port = int(line.rsplit(":", 1)[1])
                    if line.startswith("websocket listening on 127.0.0.1:"):
                        self.ws_port = int(line.split()[3].rsplit(":", 1)[1])

    @property
    def url(self):
        return f"http://127.0.0.1:{self.ws_port}/"

    @property
    def ws_url(self):
        return f"ws://127.0.0.1:{self.ws_port}/ws"

    def token(self, user, device="web"):
        return mint_token(SECRET, user, device)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "data")
    yield s
    s.stop()


class JsonPeer:
    """A `guildhall.json` WebSocket client: requests by id, events in order."""

    def __init__(self, server, user=None, **connect_args):
        self.connection = connect(server.ws_url, subprotocols=["guildhall.json"], open_timeout=10, **connect_args)
        self.ws = self.connection.__enter__()
        self.next_id = 1
        self.events = []
        self.responses = {}
        if user:
            self.login = self.request({"login": {"token": server.token(user)}})["login"]

    def send(self, frame):
        self.ws.send(json.dumps(frame))

    def receive(self, timeout=10):
        frame = json.loads(self.ws.recv(timeout=timeout))
        if "response" in frame:
            self.responses[frame["response"].get("id", "0")] = frame["response"]
        elif "event" in frame:
            self.events.append(frame["event"])
        return frame

    def request(self, body, timeout=10):
        rid = str(self.next_id)
        self.next_id += 1
        self.send({"request": {"id": rid, **body}})
        deadline = time.time() + timeout
        while rid not in self.responses:
            self.receive(timeout=max(0.01, deadline - time.time()))
        response = self.responses.pop(rid)
        if "error" in response:
            raise RequestFailed(response["error"])
        return response

    def event(self, kind, timeout=10, where=lambda body: True):
        """The first event with body `kind` (already received or next), matching `where`."""
        deadline = time.time() + timeout
        seen = 0
        while True:
            for e in self.events[seen:]:
                if kind in e and where(e[kind]):
                    self.events.remove(e)
                    return e
            seen = len(self.events)
            self.receive(timeout=max(0.01, deadline - time.time()))

    def close(self):
        self.connection.__exit__(None, None, None)


class RequestFailed(Exception):
    def __init__(self, error):
        super().__init__(f"{error.get('code')}: {error.get('message')}")
        self.error = error
