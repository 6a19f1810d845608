# The JavaScript SDK's two examples in docs/examples, run as the guide says
# (docs/web-client.md): the echo bot on Node beside a copy of guildhall.js
# fetched from the server, and the minimal page served by another site whose
# origin the server lets connect (ws-allowed-origins), in headless chromium.
import http.server
import os
import select
import shutil
import subprocess
import threading
import time
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import ROOT, UNLIMITED, JsonPeer, Server
from test_browser import people, text_of, wait  # noqa: F401
from test_browser_layout import shared_server

EXAMPLES = os.path.join(ROOT, "docs", "examples")


def copy_beside_sdk(server, folder, example):
    """The example and guildhall.js as the server serves it, in `folder`."""
    shutil.copy(os.path.join(EXAMPLES, example), folder)
    with urllib.request.urlopen(server.url + "guildhall.js", timeout=10) as r:
        (folder / "guildhall.js").write_bytes(r.read())


def test_the_echo_bot_answers_in_its_channel(tmp_path):
    server = Server(tmp_path / "data", UNLIMITED)
    bot = None
    try:
        server_id, channel_id = shared_server(server, "alice", "echo-bot")
        folder = tmp_path / "bot"
        folder.mkdir()
        copy_beside_sdk(server, folder, "echo-bot.mjs")
        env = dict(os.environ, GUILDHALL_URL=server.ws_url, GUILDHALL_TOKEN=server.token("echo-bot", "bot"),
                   SERVER_ID=server_id, CHANNEL_ID=channel_id)
        bot = subprocess.Popen(["node", "--experimental-websocket", "echo-bot.mjs"], cwd=folder, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # Ready once it says so (it subscribes first); each read waits at most until the deadline.
        deadline, said = time.time() + 20, ""
        while "bot: ready as echo-bot" not in said:
            left = deadline - time.time()
            assert left > 0 and bot.poll() is None, f"the bot did not start: {said!r}"
            if select.select([bot.stdout], [], [], left)[0]:
                said += os.read(bot.stdout.fileno(), 4096).decode()
        alice = JsonPeer(server, "alice")
        alice.request({"subscribe": {"type": "CHANNEL_MSG", "operation": "SUBSCRIBE", "targets": [{"serverId": server_id, "channelId": channel_id}]}})
        asked = alice.request({"sendMessage": {"channelId": channel_id, "body": {"text": "!echo hello, bot"}}})["message"]
        alice.request({"sendMessage": {"channelId": channel_id, "body": {"text": "not for the bot"}}})
        answer = alice.event("message", where=lambda m: m["senderId"] == "echo-bot")["message"]
        assert answer["body"]["text"] == "hello, bot"
        assert answer["replyTo"]["messageUid"] == asked["uid"]
        alice.close()
    finally:
        if bot:
            bot.terminate()
            bot.wait(timeout=10)
        server.stop()


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_the_minimal_page_shows_and_sends_from_another_site(tmp_path, people):
    site = tmp_path / "site"
    site.mkdir()
    # The application's site: a plain static server on a free port.
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a, **k: Quiet(*a, directory=str(site), **k))
    origin = f"http://127.0.0.1:{httpd.server_address[1]}"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    server = Server(tmp_path / "data", UNLIMITED + [f"ws-allowed-origins={origin}"])
    try:
        server_id, channel_id = shared_server(server, "bob", "alice")
        copy_beside_sdk(server, site, "minimal-page.html")
        bob = JsonPeer(server, "bob")
        bob.request({"subscribe": {"type": "CHANNEL_MSG", "operation": "SUBSCRIBE", "targets": [{"serverId": server_id, "channelId": channel_id}]}})
        bob.request({"sendMessage": {"channelId": channel_id, "body": {"text": "before you came"}}})
        d = people()
        d.get(f"{origin}/minimal-page.html?ws={server.ws_url}&server={server_id}&channel={channel_id}&token={server.token('alice')}")
        wait(d, "the history", lambda: "bob: before you came" in text_of(d, "#log"))
        bob.request({"sendMessage": {"channelId": channel_id, "body": {"text": "live now"}}})
        wait(d, "a live message", lambda: "bob: live now" in text_of(d, "#log"))
        d.find_element(By.ID, "text").send_keys("hi from the page", Keys.ENTER)
        heard = bob.event("message", where=lambda m: m["senderId"] == "alice")["message"]
        assert heard["body"]["text"] == "hi from the page"
        wait(d, "her own message shown", lambda: "alice: hi from the page" in text_of(d, "#log"))
        bob.close()
    finally:
        server.stop()
        httpd.shutdown()
