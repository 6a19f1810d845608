# The JavaScript SDK's reconnection in a real browser (docs/web-client.md, "The JavaScript
# SDK"), against a scripted WebSocket peer on loopback that speaks guildhall.json: a login
# nobody answers is given up after loginTimeoutMs and tried again; a login answered
# UNAVAILABLE (in a cluster, no node serves the account while its home moves) is tried
# again, not taken for a refusal. The peer serves the page and web/guildhall.js itself: the
# web client's own pages allow no connection to another origin.
import json
import os
import threading

from websockets.sync.server import serve

from conftest import ROOT
from test_browser import people, wait  # noqa: F401 (a fixture)

PAGE = '<!doctype html><title>reconnect</title><script type="module">window.loaded = true;</script>'


def page_and_module(connection, request):
    """The peer's plain HTTP answers: a blank page, and the SDK as a module; /ws is upgraded."""
    if request.path == "/ws":
        return None
    if request.path == "/guildhall.js":
        with open(os.path.join(ROOT, "web", "guildhall.js")) as f:
            response = connection.respond(200, f.read())
        response.headers["Content-Type"] = "text/javascript; charset=utf-8"
        return response
    response = connection.respond(200, PAGE)
    response.headers["Content-Type"] = "text/html; charset=utf-8"
    return response


def test_the_sdk_tries_again_after_a_login_never_answered_and_one_answered_unavailable(people):
    firsts = []  # each connection's first frame, in order
    lock = threading.Lock()

    def peer(ws):
        first = json.loads(ws.recv(timeout=10))
        with lock:
            n = len(firsts)
            firsts.append(first)
        if n == 1:
            ws.send(json.dumps({"response": {"id": "0", "error": {"code": "UNAVAILABLE", "message": "no node serves user ann now; retry"}}}))
            ws.close(1000, "no node serves your account now; reconnect")
            return
        for _ in ws:  # the first: never answered; later ones: held
            pass

    with serve(peer, "127.0.0.1", 0, subprotocols=["guildhall.json"], process_request=page_and_module) as scripted:
        threading.Thread(target=scripted.serve_forever, daemon=True).start()
        port = scripted.socket.getsockname()[1]
        d = people()
        d.get(f"http://127.0.0.1:{port}/")
        d.execute_script("""
            const url = arguments[0];
            window.states = [];
            import("/guildhall.js").then(({ GuildhallConnection }) => {
              const c = new GuildhallConnection({ url, token: "ann-token", loginTimeoutMs: 500 });
              c.addEventListener("state", (e) => window.states.push(e.detail));
              c.connect();
            });""", f"ws://127.0.0.1:{port}/ws")
        # Within 8 s: the default 15 s login timeout, or a refusal taken as final, would miss it.
        wait(d, "a third connection", lambda: len(firsts) >= 3, timeout=8)
        states = d.execute_script("return window.states")
        scripted.shutdown()
    assert all("login" in f["request"] for f in firsts[:3]), firsts
    reasons = [s.get("reason") for s in states if s["state"] == "reconnecting"]
    assert reasons[:2] == ["the login was not answered in time", "no node serves your account now; reconnect"], states
    assert not any(s["state"] == "closed" for s in states), states
