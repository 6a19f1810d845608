# The web client in a real browser (README "Web client"): Debian's headless chromium
# driven by selenium, two people, alice and bob, against a real server.
# Each step waits for what the page shows, with a deadline. Screenshots of
# the main views go to .build/web-screenshots (or $GUILDHALL_SCREENSHOTS).
import os
import time

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from conftest import ROOT, UNLIMITED, JsonPeer

SHOTS = os.environ.get("GUILDHALL_SCREENSHOTS", os.path.join(ROOT, ".build", "web-screenshots"))


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800", "--lang=en-US"]:
        options.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


@pytest.fixture
def people():
    made = []

    def make():
        made.append(browser())
        return made[-1]

    yield make
    for d in made:
        d.quit()


def wait(d, what, condition, timeout=15):
    # The page redraws lists as events come: an element found a moment ago may be gone.
    try:
        # (A TypeError is a text read before its element is drawn: `x in None`.)
        return WebDriverWait(d, timeout, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException, TypeError)).until(
            lambda _: condition(), message=f"waiting for {what}")
    except Exception:
        shot(d, "failed-" + "".join(c if c.isalnum() else "-" for c in what) + ".png")
        print("page text:", d.execute_script("return document.body.innerText"))
        raise


def text_of(d, css):
    """The text of the first element matching `css`, read in one step (None when there is none)."""
    return d.execute_script("const e = document.querySelector(arguments[0]); return e ? e.innerText : null", css)


def shot(d, name):
    os.makedirs(SHOTS, exist_ok=True)
    d.save_screenshot(os.path.join(SHOTS, name))


def sign_in(d, server, user, via_url=False):
    if via_url:
        d.get(f"{server.url}?token={server.token(user)}")
    else:
        d.get(server.url)
        d.find_element(By.ID, "token").send_keys(server.token(user))
        d.find_element(By.CSS_SELECTOR, "#login-form button").click()
    wait(d, f"{user} connected", lambda: text_of(d, "#connection") == "connected")
    wait(d, f"{user}'s name shown", lambda: user in text_of(d, "#me"))


def click_channel(d, channel_id):
    """Opens a channel once the list shows it (the server list loads after the connection)."""
    css = f"li.channel[data-id='{channel_id}']"
    wait(d, f"channel {channel_id} listed", lambda: d.find_elements(By.CSS_SELECTOR, css))
    d.find_element(By.CSS_SELECTOR, css).click()


def submit(d, input_id, text):
    field = d.find_element(By.ID, input_id)
    field.clear()
    field.send_keys(text, Keys.ENTER)


def create_server(d, name, icon=""):
    """Makes a server from the rail's + (the dialog asks for a name and an icon)."""
    d.find_element(By.ID, "add-server").click()
    wait(d, "the add-server dialog", lambda: d.find_element(By.ID, "create-server-name").is_displayed())
    if icon:
        d.find_element(By.ID, "create-server-icon").send_keys(icon)
    submit(d, "create-server-name", name)
    wait(d, "the dialog closed", lambda: not d.find_element(By.ID, "add-server-dialog").is_displayed())


def join_server(d, server_id):
    """Joins a server (by id or invite link) from the rail's +."""
    d.find_element(By.ID, "add-server").click()
    wait(d, "the add-server dialog", lambda: d.find_element(By.ID, "join-id").is_displayed())
    submit(d, "join-id", server_id)
    wait(d, "the dialog closed", lambda: not d.find_element(By.ID, "add-server-dialog").is_displayed())


def open_home(d):
    """Shows one's direct and group conversations in the sidebar (the rail's first button)."""
    d.find_element(By.ID, "home-button").click()
    wait(d, "the conversations", lambda: d.find_element(By.ID, "home-pane").is_displayed())


MESSAGE = "[...document.querySelectorAll('#messages .message')].filter(m => m.querySelector('.text')?.innerText === arguments[0])"


def count_messages(d, text):
    return d.execute_script(f"return {MESSAGE}.length", text)


def part_of(d, text, css):
    """The text of `css` inside the message showing `text` (None when either is missing)."""
    return d.execute_script(f"const m = {MESSAGE}[0]; const e = m && m.querySelector(arguments[1]); return e ? e.innerText : null", text, css)


def attribute_of(d, text, css, name):
    return d.execute_script(f"const m = {MESSAGE}[0]; const e = m && m.querySelector(arguments[1]); return e ? e.getAttribute(arguments[2]) : null",
                            text, css, name)


def click_in(d, text, css):
    # Actions show on hover; a script's click is what a person's is. It runs
    # after the script returns, as an edit's prompt blocks the page.
    assert d.execute_script(f"const m = {MESSAGE}[0]; const e = m && m.querySelector(arguments[1]); if (e) setTimeout(() => e.click()); return !!e",
                            text, css)


def send(d, text):
    submit(d, "text", text)
    wait(d, f"'{text}' shown as sent", lambda: count_messages(d, text) == 1)


@pytest.fixture
def server(tmp_path):
    # A display cap of 3, so the browser shows "3+" after four unread messages.
    from conftest import Server
    s = Server(tmp_path / "data", settings=["unread-display-cap=3"] + UNLIMITED)
    yield s
    s.stop()


def test_alice_and_bob_chat_in_the_web_client(server, people):
    alice = people()
    alice.get(server.url)
    shot(alice, "1-sign-in.png")
    sign_in(alice, server, "alice")

    # Alice makes a server with two channels.
    create_server(alice, "Guild of Tests")
    wait(alice, "the new server listed", lambda: text_of(alice, "li.server .name") == "Guild of Tests")
    server_id = alice.find_element(By.CSS_SELECTOR, "li.server").get_attribute("data-id")
    submit(alice, "create-channel-name", "general")
    wait(alice, "general listed", lambda: len(alice.find_elements(By.CSS_SELECTOR, "li.channel")) == 1)
    submit(alice, "create-channel-name", "random")
    wait(alice, "random listed", lambda: len(alice.find_elements(By.CSS_SELECTOR, "li.channel")) == 2)
    channels = {c.find_element(By.CSS_SELECTOR, ".name").text: c.get_attribute("data-id") for c in alice.find_elements(By.CSS_SELECTOR, "li.channel")}
    general, random = channels["# general"], channels["# random"]

    # Bob signs in with the token in the address, joins alice's server, both open general.
    bob = people()
    sign_in(bob, server, "bob", via_url=True)
    assert "token=" not in bob.current_url, "the token leaves the address bar"
    join_server(bob, server_id)
    wait(bob, "alice's server listed for bob", lambda: bob.find_elements(By.CSS_SELECTOR, f"li.channel[data-id='{general}']"))
    click_channel(bob, general)
    click_channel(alice, general)
    wait(alice, "alice's composer", lambda: alice.find_element(By.ID, "composer").is_displayed())
    wait(bob, "bob's composer", lambda: bob.find_element(By.ID, "composer").is_displayed())

    # Bob sees alice typing; then they exchange messages.
    alice.find_element(By.ID, "text").send_keys("hel")
    wait(bob, "'alice is typing…'", lambda: text_of(bob, "#typing") == "alice is typing…")
    alice.find_element(By.ID, "text").clear()
    send(alice, "hello bob")
    wait(bob, "bob hears alice", lambda: count_messages(bob, "hello bob") == 1)
    send(bob, "hi alice")
    wait(alice, "alice hears bob", lambda: count_messages(alice, "hi alice") == 1)
    shot(bob, "2-channel.png")

    # Away in random, alice's badge counts bob's messages in general; opening general clears it.
    click_channel(alice, random)
    wait(alice, "random open", lambda: text_of(alice, "#view-title") == "# random")
    send(bob, "are you there?")
    send(bob, "anyone?")
    badge = f"li.channel[data-id='{general}'] .badge.unread"
    mention = f"li.channel[data-id='{general}'] .badge.mention"
    wait(alice, "general's unread badge at 2", lambda: text_of(alice, badge) == "2")
    assert text_of(alice, "li.server .badge.unread") == "2" and text_of(alice, mention) == ""
    send(bob, "@alice look")
    wait(alice, "a mention badge", lambda: text_of(alice, mention) == "@1" and text_of(alice, badge) == "3")
    send(bob, "still there?")
    wait(alice, "the count shown as 3+ above the display cap", lambda: text_of(alice, badge) == "3+")
    shot(alice, "3-unread-badges.png")
    click_channel(alice, general)
    wait(alice, "the badges cleared", lambda: text_of(alice, badge) == "" and text_of(alice, mention) == "")
    wait(alice, "bob's messages shown", lambda: count_messages(alice, "still there?") == 1)

    # A message asking for read receipts: bob, reading general, responds; alice sees "read by 1 of 1" and who.
    alice.find_element(By.ID, "need-receipt").click()
    send(alice, "please confirm")
    wait(alice, "read by 1 of 1", lambda: part_of(alice, "please confirm", ".receipt") == "read by 1 of 1")
    click_in(alice, "please confirm", ".receipt")
    wait(alice, "the reader list", lambda: alice.find_element(By.ID, "readers").is_displayed() and "bob" in text_of(alice, "#reader-list"))
    shot(alice, "4-read-receipts.png")
    alice.find_element(By.ID, "readers-close").click()
    alice.find_element(By.ID, "need-receipt").click()

    # Message operations: bob reacts and replies; alice edits and recalls.
    click_in(bob, "hello bob", ".react-action")
    wait(bob, "the emoji picker", lambda: bob.find_element(By.ID, "emoji-picker").is_displayed())
    bob.find_element(By.CSS_SELECTOR, "#emoji-picker button[data-type='1']").click()
    wait(alice, "bob's reaction", lambda: "👍 1" in (part_of(alice, "hello bob", ".reactions") or ""))
    click_in(bob, "please confirm", ".reply-action")
    send(bob, "confirmed")
    wait(alice, "the reply's quote", lambda: "please confirm" in (part_of(alice, "confirmed", ".reply") or ""))
    # Editing in place: the text becomes a field; Enter saves.
    click_in(alice, "hello bob", ".edit-action")
    wait(alice, "the edit field", lambda: alice.find_elements(By.CSS_SELECTOR, "#messages .edit-box input"))
    field = alice.find_element(By.CSS_SELECTOR, "#messages .edit-box input")
    field.send_keys(", edited", Keys.ENTER)
    wait(bob, "the edit", lambda: part_of(bob, "hello bob, edited", ".edited") == "(edited)")
    send(alice, "oops, wrong channel")
    wait(bob, "the mistake", lambda: count_messages(bob, "oops, wrong channel") == 1)
    alice.execute_script("window.confirm = () => true")
    click_in(alice, "oops, wrong channel", ".recall-action")
    wait(bob, "the recall", lambda: count_messages(bob, "oops, wrong channel") == 0 and count_messages(bob, "message recalled") == 1)

    # A dropped connection resumes: what bob sends meanwhile reaches alice once.
    alice.execute_script("window.guildhall.ws.close()")
    send(bob, "while you were away")
    wait(alice, "alice back", lambda: text_of(alice, "#connection") == "connected" and count_messages(alice, "while you were away") == 1)

    # A direct message shows delivered (bob's browser received it), then read (bob opened it).
    open_home(alice)
    submit(alice, "dm-peer", "bob")
    wait(alice, "the conversation open", lambda: text_of(alice, "#view-title") == "@ bob")
    send(alice, "psst, bob")
    ticks = lambda: attribute_of(alice, "psst, bob", ".ticks", "data-status")
    wait(alice, "delivered", lambda: ticks() == "DELIVERED")
    shot(alice, "5-direct-delivered.png")
    open_home(bob)
    wait(bob, "the conversation listed for bob", lambda: bob.find_elements(By.CSS_SELECTOR, "li.conversation[data-peer='alice']"))
    assert text_of(bob, "li.conversation[data-peer='alice'] .badge.unread") == "1"
    bob.find_element(By.CSS_SELECTOR, "li.conversation[data-peer='alice']").click()
    wait(bob, "the direct message", lambda: count_messages(bob, "psst, bob") == 1)
    wait(alice, "read", lambda: ticks() == "READ")
    # Typing in the conversation reaches bob, who has it open. The page says "typing" at most
    # every 3 s (as in a channel), and alice's last message was typed a moment ago: she keeps typing.
    wait(bob, "'alice is typing…' in the conversation",
         lambda: alice.find_element(By.ID, "text").send_keys("m") or text_of(bob, "#typing") == "alice is typing…")
    alice.find_element(By.ID, "text").clear()
    shot(alice, "6-direct-read.png")
    shot(bob, "7-direct-bob.png")

    # History pages upward: 70 messages in random, 50 shown, the rest on scrolling to the top.
    poster = JsonPeer(server, "carol")
    poster.request({"joinServer": {"serverId": server_id}})
    for i in range(70):
        poster.request({"sendMessage": {"channelId": random, "body": {"text": f"old news {i:02}"}}})
    alice.find_element(By.CSS_SELECTOR, f"li.server[data-id='{server_id}']").click()
    click_channel(alice, random)
    wait(alice, "the newest page", lambda: count_messages(alice, "old news 69") == 1 and count_messages(alice, "old news 00") == 0)
    assert len(alice.find_elements(By.CSS_SELECTOR, "#messages .message")) == 50
    alice.execute_script("document.getElementById('messages').scrollTop = 0")
    wait(alice, "the older page", lambda: count_messages(alice, "old news 00") == 1)
    assert len(alice.find_elements(By.CSS_SELECTOR, "#messages .message")) == 70
    poster.close()


def png(width, height):
    """A real PNG of one colour (the browser decodes it: its natural size is checked)."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    rows = b"".join(b"\x00" + b"\x3b\x62\xb3" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def test_files_and_search_in_the_web_client(server, people, tmp_path):
    # alice's server with a channel, bob a member (made over the protocol: the UI for it is the first test's).
    owner = JsonPeer(server, "alice")
    server_id = owner.request({"createServer": {"name": "Files Guild", "openJoin": True}})["server"]["serverId"]
    general = owner.request({"createChannel": {"serverId": server_id, "name": "general"}})["channel"]["channelId"]
    member = JsonPeer(server, "bob")
    member.request({"joinServer": {"serverId": server_id}})
    owner.close()
    member.close()
    alice, bob = people(), people()
    for d, user in [(alice, "alice"), (bob, "bob")]:
        sign_in(d, server, user, via_url=True)
        wait(d, f"general listed for {user}", lambda: d.find_elements(By.CSS_SELECTOR, f"li.channel[data-id='{general}']"))
        click_channel(d, general)
        wait(d, f"{user}'s composer", lambda: d.find_element(By.ID, "composer").is_displayed())

    # alice attaches a picture with the file chooser and sends it with text: bob sees the image itself.
    picture = tmp_path / "harbour.png"
    picture.write_bytes(png(640, 480))
    alice.find_element(By.ID, "file-input").send_keys(str(picture))
    wait(alice, "the file waiting to be sent", lambda: "harbour.png" in (text_of(alice, "#pending-files") or ""))
    send(alice, "the harbour at dusk")
    wait(alice, "nothing left waiting", lambda: not alice.find_element(By.ID, "pending-files").is_displayed())
    image = "const m = " + MESSAGE + "[0]; const i = m && m.querySelector('.attachments img'); return i && i.complete ? i.naturalWidth : 0"
    wait(bob, "the picture shown to bob", lambda: bob.execute_script(image, "the harbour at dusk") == 640)
    assert attribute_of(bob, "the harbour at dusk", ".attachments img", "width") == "320", "scaled to fit"
    assert "u=bob" in attribute_of(bob, "the harbour at dusk", ".attachments a.image", "href"), "bob's own link"
    shot(bob, "8-picture.png")

    # A file dropped on the view goes with a message that has no text; bob gets a link that downloads it.
    alice.execute_script("""
        const t = new DataTransfer();
        t.items.add(new File(["the minutes of the meeting"], "minutes.txt", { type: "text/plain" }));
        document.getElementById("view").dispatchEvent(new DragEvent("drop", { dataTransfer: t, bubbles: true, cancelable: true }));""")
    wait(alice, "the dropped file waiting", lambda: "minutes.txt" in (text_of(alice, "#pending-files") or ""))
    alice.find_element(By.CSS_SELECTOR, "#composer button[type=submit]").click()
    link = "return [...document.querySelectorAll('#messages .attachments a.file')].map(a => [a.innerText, a.href])"
    wait(bob, "the file's link", lambda: any("minutes.txt" in t for t, _ in bob.execute_script(link)))
    href = next(h for t, h in bob.execute_script(link) if "minutes.txt" in t)
    got = bob.execute_async_script("fetch(arguments[0]).then(r => r.text()).then(arguments[arguments.length - 1])", href)
    assert got == "the minutes of the meeting"
    shot(bob, "9-file.png")

    # alice picks an avatar: uploaded as hers, named by her profile, shown (loaded) beside her name in the member list.
    face = tmp_path / "face.png"
    face.write_bytes(png(64, 64))
    alice.find_element(By.ID, "avatar-input").send_keys(str(face))
    avatar = "const i = document.querySelector(\"#member-list li[data-user='alice'] img.avatar\"); return i && i.complete ? i.naturalWidth : 0"
    wait(alice, "her avatar in the member list", lambda: alice.execute_script(avatar) == 64)

    # Sixty messages later, the picture's message is no longer in bob's page.
    poster = JsonPeer(server, "alice")
    for i in range(60):
        poster.request({"sendMessage": {"channelId": general, "body": {"text": f"later {i:02}"}}})
    poster.close()
    wait(bob, "the latest message", lambda: count_messages(bob, "later 59") == 1)
    click_channel(bob, general)
    wait(bob, "the newest page without the picture", lambda: count_messages(bob, "later 59") == 1 and count_messages(bob, "the harbour at dusk") == 0)

    # Search: bob finds the picture's message by a word, and the file by its name.
    submit(bob, "search-input", "harbour")
    hits = "return [...document.querySelectorAll('#search-list li.hit')].map(h => h.innerText)"
    wait(bob, "a hit for harbour", lambda: any("the harbour at dusk" in h for h in bob.execute_script(hits)))
    assert bob.execute_script("return document.querySelector('#search-list mark').innerText") == "harbour"
    submit(bob, "search-input", "minutes")
    wait(bob, "the file found by its name", lambda: any("minutes.txt" in h for h in bob.execute_script(hits)))
    shot(bob, "10-search.png")

    # A hit jumps to its message, marked, among those around it; then back to the present.
    submit(bob, "search-input", "harbour")
    wait(bob, "the hit", lambda: any("the harbour at dusk" in h for h in bob.execute_script(hits)))
    bob.find_element(By.CSS_SELECTOR, "#search-list li.hit").click()
    focused = "const f = document.querySelector('#messages .message.focus'); return f ? f.querySelector('.text').innerText : null"
    wait(bob, "the picture's message marked", lambda: bob.execute_script(focused) == "the harbour at dusk")
    assert count_messages(bob, "later 59") == 0 and bob.find_element(By.ID, "jump-present").is_displayed()
    shot(bob, "11-jumped.png")
    bob.find_element(By.ID, "jump-present").click()
    wait(bob, "back at the newest", lambda: count_messages(bob, "later 59") == 1 and not bob.find_element(By.ID, "jump-present").is_displayed())


def member_status(d, user):
    return d.execute_script("const e = document.querySelector(`#member-list li[data-user='${arguments[0]}']`); return e ? e.dataset.status : null", user)


def test_the_member_list_and_presence_in_the_web_client(server, people):
    # alice owns a server bob and carol belong to (made over the protocol); alice watches its member list in the browser.
    owner = JsonPeer(server, "bob")
    server_id = owner.request({"createServer": {"name": "Presence Guild", "openJoin": True}})["server"]["serverId"]
    owner.request({"createChannel": {"serverId": server_id, "name": "general"}})
    carol = JsonPeer(server, "carol")
    carol.request({"joinServer": {"serverId": server_id}})
    carol.close()
    alice = people()
    sign_in(alice, server, "alice")
    join_server(alice, server_id)
    wait(alice, "the member list", lambda: member_status(alice, "bob") == "PRESENCE_ONLINE" and member_status(alice, "carol") == "PRESENCE_OFFLINE")
    # The owner first, then by name; counts in the header.
    names = alice.execute_script("return [...document.querySelectorAll('#member-list li')].map(e => e.dataset.user)")
    assert names == ["bob", "alice", "carol"]
    wait(alice, "the counts", lambda: text_of(alice, "#member-counts") == "2 online · 3 members")

    # bob chooses do-not-disturb with a text: alice's list shows it live.
    owner.request({"setPresence": {"status": "PRESENCE_DO_NOT_DISTURB", "customText": "in a meeting"}})
    wait(alice, "bob's do-not-disturb", lambda: member_status(alice, "bob") == "PRESENCE_DO_NOT_DISTURB"
         and "in a meeting" in text_of(alice, "#member-list li[data-user='bob']"))
    # carol comes online, then dave joins: the watched list follows.
    carol = JsonPeer(server, "carol")
    wait(alice, "carol online", lambda: member_status(alice, "carol") == "PRESENCE_ONLINE")
    dave = JsonPeer(server, "dave")
    dave.request({"joinServer": {"serverId": server_id}})
    wait(alice, "dave listed", lambda: member_status(alice, "dave") == "PRESENCE_ONLINE" and text_of(alice, "#member-counts") == "4 online · 4 members")
    shot(alice, "8-member-list.png")

    # alice goes invisible from the header: bob, watching her, sees her offline.
    owner.request({"subscribe": {"type": "USER_PRESENCE", "targets": [{"userId": "alice"}]}})
    Select(alice.find_element(By.ID, "presence-choice")).select_by_value("PRESENCE_INVISIBLE")
    deadline = time.time() + 15
    seen = None
    while time.time() < deadline and seen != "PRESENCE_OFFLINE":
        owner.receive(timeout=max(0.01, deadline - time.time()))
        for e in owner.events:
            for p in e.get("presence", {}).get("presences", []):
                if p.get("userId") == "alice":
                    seen = p.get("status", "PRESENCE_OFFLINE")
    assert seen == "PRESENCE_OFFLINE"
    for peer in (owner, carol, dave):
        peer.close()


def test_an_invite_link_opens_the_join_screen_and_lands_in_its_channel(server, people):
    owner = JsonPeer(server, "alice")
    server_id = owner.request({"createServer": {"name": "Linked Guild", "icon": "🏰", "openJoin": False}})["server"]["serverId"]
    owner.request({"createChannel": {"serverId": server_id, "name": "lobby"}})
    welcome = owner.request({"createChannel": {"serverId": server_id, "name": "welcome"}})["channel"]["channelId"]
    code = owner.request({"createInviteCode": {"serverId": server_id, "channelId": welcome}})["inviteCode"]["code"]

    bob = people()
    bob.get(f"{server.url.rstrip('/')}/invite/{code}?token={server.token('bob')}")
    wait(bob, "the join screen", lambda: bob.find_element(By.ID, "invite-screen").is_displayed()
         and text_of(bob, "#invite-server") == "Linked Guild" and text_of(bob, "#invite-details") == "1 member · lands in # welcome")
    assert "token=" not in bob.current_url and "/invite/" not in bob.current_url
    shot(bob, "9-invite.png")
    bob.find_element(By.ID, "invite-join").click()
    wait(bob, "landed in welcome", lambda: text_of(bob, "#view-title") == "# welcome" and not bob.find_element(By.ID, "invite-screen").is_displayed())
    wait(bob, "both in the member list", lambda: member_status(bob, "alice") == "PRESENCE_ONLINE" and member_status(bob, "bob") == "PRESENCE_ONLINE")
    # From the link to a conversation: bob writes in the channel he landed in, alice hears it.
    owner.request({"subscribe": {"type": "CHANNEL_MSG", "operation": "SUBSCRIBE", "targets": [{"serverId": server_id, "channelId": welcome}]}})
    send(bob, "thanks for the invite")
    assert owner.event("message", where=lambda m: m["senderId"] == "bob")["message"]["body"]["text"] == "thanks for the invite"

    # bob makes a link of his own; a stale one shows as invalid.
    bob.find_element(By.ID, "invite-people").click()
    wait(bob, "a link made", lambda: bob.find_element(By.ID, "invite-link").get_attribute("value").rsplit("/invite/", 1)[-1].isalnum())
    carol = people()
    carol.get(f"{server.url.rstrip('/')}/invite/ZZZZZZZZ?token={server.token('carol')}")
    wait(carol, "an invalid invite", lambda: "invalid or has expired" in (text_of(carol, "#invite-error") or ""))
    owner.close()


def test_pins_and_slow_mode_in_the_web_client(server, people):
    owner = JsonPeer(server, "alice")
    server_id = owner.request({"createServer": {"name": "Pinned Guild", "openJoin": True}})["server"]["serverId"]
    general = owner.request({"createChannel": {"serverId": server_id, "name": "general"}})["channel"]["channelId"]
    owner.request({"updateChannel": {"channelId": general, "slowModeSeconds": 30}})
    uid = owner.request({"sendMessage": {"channelId": general, "body": {"text": "read the rules"}}})["message"]["uid"]

    alice = people()
    sign_in(alice, server, "alice")
    click_channel(alice, general)
    wait(alice, "the message", lambda: count_messages(alice, "read the rules") == 1)
    assert text_of(alice, "#slow-mode") == "Slow mode: one message every 30 s"
    click_in(alice, "read the rules", ".pin-action")
    wait(alice, "the pin listed", lambda: alice.find_element(By.ID, "pins").is_displayed()
         and alice.find_elements(By.CSS_SELECTOR, f"#pin-list li.pin[data-uid='{uid}']"))
    assert "pinned by alice" in text_of(alice, "#pin-list li.pin")
    shot(alice, "10-pins.png")
    alice.find_element(By.CSS_SELECTOR, "#pin-list .unpin-action").click()
    wait(alice, "the pin gone", lambda: text_of(alice, "#pin-list") == "no pins")
    owner.close()


def test_names_moderation_and_the_audit_log_in_the_web_client(server, people):
    # alice owns a server (made over the protocol) that bob joined and named himself in.
    owner = JsonPeer(server, "alice")
    server_id = owner.request({"createServer": {"name": "Moderated Guild", "openJoin": True}})["server"]["serverId"]
    owner.request({"createChannel": {"serverId": server_id, "name": "general"}})
    owner.close()
    bob = JsonPeer(server, "bob")
    bob.request({"setProfile": {"displayName": "Bobby B"}})
    bob.request({"joinServer": {"serverId": server_id}})

    alice = people()
    sign_in(alice, server, "alice")
    wait(alice, "the server listed", lambda: alice.find_elements(By.CSS_SELECTOR, f"#server-list li.server[data-id='{server_id}']"))
    alice.find_element(By.CSS_SELECTOR, f"#server-list li.server[data-id='{server_id}']").click()
    wait(alice, "bob by his name", lambda: text_of(alice, "#member-list li[data-user='bob'] .name") == "Bobby B")

    # A timeout with a reason, from the member list; the audit log says who, what and why.
    submit_reason = alice.find_element(By.ID, "moderation-reason")
    submit_reason.send_keys("flooding the channel")
    alice.find_element(By.CSS_SELECTOR, "#member-list li[data-user='bob'] .timeout-action").click()
    wait(alice, "bob timed out", lambda: alice.find_elements(By.CSS_SELECTOR, "#member-list li[data-user='bob'] .timed-out"))
    alice.find_element(By.ID, "audit-open").click()
    # (Nothing until the log's answer comes: the panel fills then.)
    wait(alice, "the audit entry", lambda: "flooding the channel" in (text_of(alice, "#audit-list li[data-action='AUDIT_MEMBER_TIMED_OUT']") or ""))
    assert "Bobby B" in text_of(alice, "#audit-list li[data-action='AUDIT_MEMBER_TIMED_OUT']")
    shot(alice, "11-audit-log.png")

    # alice names herself from the header's Profile: her row in the list shows it.
    alice.find_element(By.CSS_SELECTOR, "#profile-box summary").click()
    submit(alice, "profile-name", "Alice A.")
    wait(alice, "alice by her name", lambda: text_of(alice, "#member-list li[data-user='alice'] .name") == "Alice A.")
    bob.close()


def test_a_nickname_and_blocking_in_the_web_client(server, people):
    owner = JsonPeer(server, "alice")
    server_id = owner.request({"createServer": {"name": "Nick Guild", "openJoin": True}})["server"]["serverId"]
    owner.close()
    alice = people()
    sign_in(alice, server, "alice")
    wait(alice, "the server listed", lambda: alice.find_elements(By.CSS_SELECTOR, f"#server-list li.server[data-id='{server_id}']"))
    alice.find_element(By.CSS_SELECTOR, f"#server-list li.server[data-id='{server_id}']").click()
    wait(alice, "the member list", lambda: text_of(alice, "#member-list li[data-user='alice'] .name") == "alice")
    submit(alice, "nickname-input", "The Boss")
    wait(alice, "her nickname", lambda: text_of(alice, "#member-list li[data-user='alice'] .name") == "The Boss")

    # eve writes; alice blocks her from the conversation, and the blocked list can take it back.
    eve = JsonPeer(server, "eve")
    eve.request({"sendDirectMessage": {"peerId": "alice", "body": {"text": "hi there"}}})
    open_home(alice)
    wait(alice, "eve's conversation", lambda: alice.find_elements(By.CSS_SELECTOR, "#dm-list li[data-peer='eve']"))
    alice.find_element(By.CSS_SELECTOR, "#dm-list li[data-peer='eve']").click()
    wait(alice, "the message", lambda: count_messages(alice, "hi there") == 1)
    alice.execute_script("window.confirm = () => true")
    alice.find_element(By.ID, "block-peer").click()
    wait(alice, "eve blocked", lambda: text_of(alice, "#block-peer") == "Unblock")
    alice.find_element(By.CSS_SELECTOR, "#blocked-box summary").click()
    wait(alice, "eve listed as blocked", lambda: alice.find_elements(By.CSS_SELECTOR, "#blocked-list li.blocked[data-user='eve']"))
    eve.request({"sendDirectMessage": {"peerId": "alice", "body": {"text": "are you ignoring me"}}})
    alice.find_element(By.CSS_SELECTOR, "#blocked-list li.blocked[data-user='eve'] .unblock-action").click()
    wait(alice, "eve unblocked", lambda: text_of(alice, "#block-peer") == "Block" and text_of(alice, "#blocked-list") == "nobody")
    eve.request({"sendDirectMessage": {"peerId": "alice", "body": {"text": "hello again"}}})
    wait(alice, "the message after the unblock", lambda: count_messages(alice, "hello again") == 1)
    assert count_messages(alice, "are you ignoring me") == 0
    eve.close()

    # Only server-mates: a stranger is refused once she ticks it, and let in once she unticks it.
    alice.find_element(By.ID, "dm-server-mates-only").click()
    zed = JsonPeer(server, "zed")
    deadline = time.time() + 10
    while True:
        try:
            zed.request({"sendDirectMessage": {"peerId": "alice", "body": {"text": "let me in"}}})
        except Exception as refused:
            assert "server" in str(refused), refused
            break
        assert time.time() < deadline, "the stranger was never refused"
        time.sleep(0.1)
    alice.find_element(By.ID, "dm-server-mates-only").click()
    deadline = time.time() + 10
    while True:
        try:
            zed.request({"sendDirectMessage": {"peerId": "alice", "body": {"text": "thanks for letting me in"}}})
            break
        except Exception:
            assert time.time() < deadline, "the stranger was never let in"
            time.sleep(0.1)
    wait(alice, "the stranger's message", lambda: alice.find_elements(By.CSS_SELECTOR, "#dm-list li[data-peer='zed']"))
    zed.close()


def test_a_group_conversation_in_the_web_client(server, people):
    alice = people()
    sign_in(alice, server, "alice")
    bob = JsonPeer(server, "bob")
    open_home(alice)
    alice.find_element(By.CSS_SELECTOR, "#group-create-box summary").click()
    alice.find_element(By.ID, "group-create-name").send_keys("Book club")
    submit(alice, "group-create-users", "bob, carol")
    wait(alice, "the group open", lambda: text_of(alice, "#view-title") == "Book club (3)")
    wait(alice, "its members", lambda: [e.get_attribute("data-user") for e in alice.find_elements(By.CSS_SELECTOR, "#group-members li")]
         == ["alice", "bob", "carol"])
    told = bob.event("notification", where=lambda n: n.get("kind") == "CONVERSATION_UPDATED")
    group_id = told["notification"]["conversation"]["conversationId"]

    # bob writes to the group; alice writes back; bob reads it: "read by 1 of 2".
    asked = bob.request({"sendDirectMessage": {"conversationId": group_id, "body": {"text": "chapter one?"}}})["message"]["uid"]
    wait(alice, "bob's message", lambda: count_messages(alice, "chapter one?") == 1)
    # alice's page said it reached her (a group's message names no recipient): 1 of bob's 2 recipients has it.
    wait(alice, "delivered to alice", lambda: bob.request({"getMessages": {"uids": [asked]}})["messages"]["messages"][0].get("deliveredCount") == 1)
    send(alice, "yes, by Friday")
    wait(alice, "read by nobody yet", lambda: "read by 0 of 2" in (part_of(alice, "yes, by Friday", ".ticks") or ""))
    bob.event("message", where=lambda m: m.get("body", {}).get("text") == "yes, by Friday")
    bob.request({"ackConversationRead": {"conversationId": group_id}})
    wait(alice, "read by bob", lambda: "read by 1 of 2" in (part_of(alice, "yes, by Friday", ".ticks") or ""))
    shot(alice, "group-conversation.png")

    # The owner renames it and removes carol; bob hears both.
    submit(alice, "group-rename", "Readers")
    wait(alice, "the new name", lambda: text_of(alice, "#view-title") == "Readers (3)")
    alice.find_element(By.CSS_SELECTOR, "#group-members li[data-user='carol'] .group-remove").click()
    wait(alice, "carol gone", lambda: text_of(alice, "#view-title") == "Readers (2)")
    bob.event("notification", where=lambda n: n.get("kind") == "CONVERSATION_UPDATED" and "carol" not in n["conversation"].get("memberIds", []))

    # Leaving takes it out of her list; bob owns it now.
    alice.execute_script("window.confirm = () => true")
    alice.find_element(By.ID, "group-leave").click()
    wait(alice, "the group gone from her list", lambda: not alice.find_elements(By.CSS_SELECTOR, f"#dm-list li[data-id='{group_id}']"))
    held = bob.request({"listConversations": {}})["conversations"]["conversations"]
    assert [(c["name"], c["ownerId"], c["memberIds"]) for c in held if c["conversationId"] == group_id] == [("Readers", "bob", ["bob"])]
    bob.close()


def test_a_webhook_made_in_the_web_client_posts_into_its_channel(server, people):
    import json
    import urllib.request
    owner = JsonPeer(server, "alice")
    server_id = owner.request({"createServer": {"name": "Hooked", "openJoin": True}})["server"]["serverId"]
    general = owner.request({"createChannel": {"serverId": server_id, "name": "general"}})["channel"]["channelId"]
    owner.close()
    alice = people()
    sign_in(alice, server, "alice")
    click_channel(alice, general)
    alice.find_element(By.ID, "webhooks-open").click()
    wait(alice, "the empty list", lambda: text_of(alice, "#webhook-list") == "no webhooks")
    submit(alice, "webhook-name", "CI")
    wait(alice, "the URL shown once", lambda: "/webhooks/" in (alice.find_element(By.ID, "webhook-url").get_attribute("value") or ""))
    url = alice.find_element(By.ID, "webhook-url").get_attribute("value")
    wait(alice, "the webhook listed", lambda: text_of(alice, "#webhook-list li.webhook .name") == "CI")
    request = urllib.request.Request(url, data=json.dumps({"content": "build 7 passed", "username": "Builder"}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=10) as answer:
        assert answer.status == 200
    wait(alice, "the post in the channel", lambda: count_messages(alice, "build 7 passed") == 1)
    assert part_of(alice, "build 7 passed", ".sender").startswith("Builder")
    assert part_of(alice, "build 7 passed", ".sender .tag") is not None
    shot(alice, "11-webhook.png")
    alice.execute_script("window.confirm = () => true")
    alice.find_element(By.CSS_SELECTOR, "#webhook-list .webhook-delete").click()
    wait(alice, "the webhook gone", lambda: text_of(alice, "#webhook-list") == "no webhooks")
    try:
        urllib.request.urlopen(urllib.request.Request(url, data=b'{"content": "x"}', headers={"Content-Type": "application/json"}, method="POST"), timeout=10)
        assert False, "a deleted webhook took a post"
    except urllib.error.HTTPError as e:
        assert e.code == 404


def test_staying_signed_in_the_offline_banner_the_title_and_a_hidden_tabs_notification(server, people):
    owner = JsonPeer(server, "alice")
    server_id = owner.request({"createServer": {"name": "Stay Guild", "openJoin": True}})["server"]["serverId"]
    general = owner.request({"createChannel": {"serverId": server_id, "name": "general"}})["channel"]["channelId"]
    owner.close()
    alice = people()
    alice.get(server.url)
    alice.find_element(By.ID, "token").send_keys(server.token("alice"))
    alice.find_element(By.ID, "stay-signed-in").click()
    alice.find_element(By.CSS_SELECTOR, "#login-form button").click()
    wait(alice, "alice connected", lambda: text_of(alice, "#connection") == "connected")
    # Kept on the device: a new visit signs in by itself.
    assert alice.execute_script("return !!localStorage.getItem('guildhall.token')")
    alice.get(server.url)
    wait(alice, "signed in again without a token typed", lambda: text_of(alice, "#connection") == "connected" and "alice" in text_of(alice, "#me"))

    # The connection drops: a banner says so until it is back.
    click_channel(alice, general)
    alice.execute_script("window.guildhall.ws.close()")
    wait(alice, "the banner", lambda: alice.find_element(By.ID, "offline-banner").is_displayed())
    wait(alice, "the banner gone once back", lambda: text_of(alice, "#connection") == "connected"
         and not alice.find_element(By.ID, "offline-banner").is_displayed())

    # The tab hidden and notifications allowed (the permission and the Notification stood in for): a mention shows one,
    # a plain message does not; the title counts what is unread elsewhere.
    alice.execute_script("""
        window.shown = [];
        window.Notification = class { constructor(title, options) { window.shown.push([title, options.body]); } };
        window.Notification.permission = "granted";
        Object.defineProperty(document, "visibilityState", { value: "hidden", configurable: true });""")
    bob = JsonPeer(server, "bob")
    bob.request({"joinServer": {"serverId": server_id}})
    bob.request({"sendMessage": {"channelId": general, "body": {"text": "just chatting"}}})
    bob.request({"sendMessage": {"channelId": general, "body": {"text": "alice, look"}, "mentions": ["alice"]}})
    wait(alice, "the mention's notification", lambda: alice.execute_script("return window.shown").__len__() == 1)
    assert alice.execute_script("return window.shown") == [["bob mentioned you", "alice, look"]]
    bob.request({"sendDirectMessage": {"peerId": "alice", "body": {"text": "psst"}}})
    wait(alice, "the direct message's notification", lambda: len(alice.execute_script("return window.shown")) == 2)
    wait(alice, "the title counts what is unread", lambda: alice.title == "(3) Guildhall")
    bob.close()

    # Signed out: the device forgets the token, and a new visit asks for one.
    alice.find_element(By.ID, "logout").click()
    wait(alice, "forgotten", lambda: alice.execute_script("return !localStorage.getItem('guildhall.token') && !sessionStorage.getItem('guildhall.token')"))
    alice.get(server.url)
    wait(alice, "the sign-in form", lambda: alice.find_element(By.ID, "login").is_displayed())
