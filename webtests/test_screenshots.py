# The screenshots in docs/screenshots, drawn from a real server: the channel
# view, direct messages, the member list, search results and the invite
# screen, each on a desktop (1280 × 800) and a phone (360 × 740), light and
# dark. `make screenshots` writes them there; `make test` draws them into
# .build/web-screenshots and checks each view shows what it should.
import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import UNLIMITED, JsonPeer, Server
from test_browser import people, shot, sign_in, submit, text_of, wait  # noqa: F401
from test_browser_layout import theme

SIZES = {"desktop": (1280, 800), "mobile": (360, 740)}


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "data", UNLIMITED)
    yield s
    s.stop()


def scene(server):
    """A small community: a café server with three channels, four members and some talk, and a direct conversation."""
    alice = JsonPeer(server, "alice")
    alice.request({"setProfile": {"displayName": "Alice Ahn"}})
    server_id = alice.request({"createServer": {"name": "Guildhall Café", "icon": "☕", "openJoin": True}})["server"]["serverId"]
    alice.request({"createServer": {"name": "Book Club", "openJoin": True}})
    alice.request({"createServer": {"name": "Weekend Hikers", "icon": "⛰️", "openJoin": True}})
    general = alice.request({"createChannel": {"serverId": server_id, "name": "general"}})["channel"]["channelId"]
    for name in ["recipes", "help"]:
        alice.request({"createChannel": {"serverId": server_id, "name": name}})
    people = {}
    for user, name, status in [("bob", "Bob Builder", "baking bread"), ("carol", "Carol Chen", ""), ("dave", "Dave Diaz", "")]:
        p = JsonPeer(server, user)
        p.request({"setProfile": {"displayName": name}})
        p.request({"joinServer": {"serverId": server_id}})
        if status:
            p.request({"setPresence": {"status": "PRESENCE_ONLINE", "customText": status}})
        people[user] = p
    people["dave"].close()
    say = lambda who, text, **more: (alice if who == "alice" else people[who]).request(
        {"sendMessage": {"channelId": general, "body": {"text": text}, **more}})["message"]
    say("alice", "Welcome to the café! Coffee is on the house today ☕")
    asked = say("bob", "Which beans are we brewing this week?")
    say("bob", "The Ethiopian ones were lovely")
    say("carol", "Still the Colombian, the new coffee comes Friday", replyTo=asked["uid"])
    reacted = say("alice", "@bob could you bring your sourdough on Saturday?", mentions=["bob"])
    people["bob"].request({"addReaction": {"channelId": general, "messageUid": reacted["uid"], "type": 2}})
    people["carol"].request({"addReaction": {"channelId": general, "messageUid": reacted["uid"], "type": 1}})
    say("bob", "Of course! Two loaves 🍞")
    people["bob"].request({"sendDirectMessage": {"peerId": "alice", "body": {"text": "Got a minute to plan Saturday?"}}})
    code = alice.request({"createInviteCode": {"serverId": server_id, "channelId": general}})["inviteCode"]["code"]
    return server_id, general, code, [alice, *people.values()]


def test_the_screenshots_of_each_view(server, people):
    server_id, general, code, peers = scene(server)
    alice = people()
    sign_in(alice, server, "alice")
    guest = people()
    for size, (w, h) in SIZES.items():
        for scheme in ["light", "dark"]:
            for d in (alice, guest):
                d.set_window_size(w, h)
                theme(d, scheme)
            name = lambda view: f"{view}-{size}-{scheme}.png"
            def drawer():
                if size == "mobile":
                    alice.find_element(By.ID, "drawer-open").click()
                    wait(alice, "the drawer open", lambda: alice.find_element(By.ID, "sidebar").rect["x"] >= 0)
            closed = lambda: alice.execute_script("document.querySelectorAll('aside.panel').forEach(p => p.hidden = true)")

            # The channel view.
            closed()
            drawer()
            wait(alice, "the café", lambda: alice.find_elements(By.CSS_SELECTOR, f"li.server[data-id='{server_id}']"))
            alice.find_element(By.CSS_SELECTOR, f"li.server[data-id='{server_id}']").click()
            wait(alice, "general listed", lambda: alice.find_elements(By.CSS_SELECTOR, f"li.channel[data-id='{general}']"))
            alice.find_element(By.CSS_SELECTOR, f"li.channel[data-id='{general}']").click()
            wait(alice, "the talk", lambda: "Two loaves" in (text_of(alice, "#messages") or "") and "Bob Builder" in (text_of(alice, "#member-list") or ""))
            alice.execute_script("document.activeElement.blur(); const b = document.getElementById('messages'); b.scrollTop = b.scrollHeight")
            shot(alice, name("channel"))

            # The member list (a drawer on a phone).
            if size == "mobile":
                alice.find_element(By.ID, "members-toggle").click()
                wait(alice, "the drawer", lambda: 0 <= alice.find_element(By.ID, "members").rect["x"] < w)
            # A member's custom status comes with presence, which may follow the list itself.
            wait(alice, "bob's status", lambda: "baking bread" in (text_of(alice, "#member-list") or ""))
            shot(alice, name("members"))
            if size == "mobile":
                ActionChains(alice).send_keys(Keys.ESCAPE).perform()
                wait(alice, "the drawer closed", lambda: alice.find_element(By.ID, "members").rect["x"] >= w)

            # Search results.
            drawer()
            submit(alice, "search-input", "coffee")
            wait(alice, "the hits", lambda: len(alice.find_elements(By.CSS_SELECTOR, "#search-list li.hit")) == 2)
            if size == "mobile":
                ActionChains(alice).send_keys(Keys.ESCAPE).perform()
                wait(alice, "the drawer closed", lambda: alice.find_element(By.ID, "sidebar").rect["x"] < 0)
            shot(alice, name("search"))
            alice.find_element(By.ID, "search-close").click()

            # Direct messages.
            drawer()
            alice.find_element(By.ID, "home-button").click()
            wait(alice, "bob's conversation", lambda: alice.find_elements(By.CSS_SELECTOR, "#dm-list li[data-peer='bob']"))
            alice.find_element(By.CSS_SELECTOR, "#dm-list li[data-peer='bob']").click()
            wait(alice, "his message", lambda: "plan Saturday" in (text_of(alice, "#messages") or "")
                 and alice.find_element(By.ID, "sidebar").rect["x"] + alice.find_element(By.ID, "sidebar").rect["width"] <= (0 if size == "mobile" else w))
            alice.execute_script("document.activeElement.blur()")
            shot(alice, name("direct-messages"))

            # The invite screen, as someone new opens the link.
            guest.get(f"{server.url.rstrip('/')}/invite/{code}?token={server.token('erin')}")
            wait(guest, "the join screen", lambda: guest.find_element(By.ID, "invite-screen").is_displayed()
                 and text_of(guest, "#invite-server") == "Guildhall Café" and text_of(guest, "#invite-icon") == "☕")
            shot(guest, name("invite"))
    for p in peers:
        p.close()
