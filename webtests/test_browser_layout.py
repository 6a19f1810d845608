# The web client as people use it (README "Web client"): the phone layout's
# drawers, the light and dark themes at WCAG AA contrast, message groups,
# day dividers, the "new messages" line and its jump, keyboard-only sending
# and editing, threads, quotes, the emoji picker, mention autocomplete, the
# people picker, a server made with an icon, and the JavaScript SDK driven alone.
# Against a real server; each step waits for what the page shows.
import json

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from conftest import UNLIMITED, JsonPeer, Server
from test_browser import (click_channel, count_messages, create_server, open_home, people, part_of, png, send, shot, sign_in,  # noqa: F401
                          submit, text_of, wait)


@pytest.fixture
def server(tmp_path):
    s = Server(tmp_path / "data", UNLIMITED)
    yield s
    s.stop()


def shared_server(server, owner, *others, channel="general"):
    """A server `owner` made over the protocol, with one channel, that `others` joined; (server id, channel id)."""
    o = JsonPeer(server, owner)
    server_id = o.request({"createServer": {"name": "Shared Guild", "openJoin": True}})["server"]["serverId"]
    channel_id = o.request({"createChannel": {"serverId": server_id, "name": channel}})["channel"]["channelId"]
    o.close()
    for user in others:
        p = JsonPeer(server, user)
        p.request({"joinServer": {"serverId": server_id}})
        p.close()
    return server_id, channel_id


def theme(d, scheme):
    d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": scheme}]})


# The contrast of every visible text against the background it is drawn on (WCAG 2's formula).
CONTRAST = """
const lum = (c) => { const [r, g, b] = c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
                     return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
const rgb = (s) => { const m = s.match(/[\\d.]+/g); return m ? m.map(Number) : null; };
const background = (e) => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c && (c.length < 4 || c[3] > 0.5)) return c.slice(0, 3); } return [255, 255, 255]; };
const bad = [];
for (const e of document.querySelectorAll('body *')) {
  if (!e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) continue;
  const own = [...e.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (!own || e.closest('[hidden], .presence, .sr-only, option')) continue;
  const style = getComputedStyle(e);
  if (style.visibility === 'hidden' || Number(style.opacity) < 0.5 || e.getBoundingClientRect().width < 2) continue;
  const fg = rgb(style.color).slice(0, 3), bg = background(e);
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  const ratio = (a + 0.05) / (b + 0.05);
  if (ratio < 4.5) bad.push(`${e.tagName}#${e.id}.${e.className} "${e.textContent.trim().slice(0, 20)}" ${ratio.toFixed(2)}`);
}
return bad;
"""


# Every control the page shows has a name a screen reader can say, and the landmarks are there.
UNNAMED = """
const named = (e) => (e.getAttribute('aria-label') || e.getAttribute('title') || (e.labels && [...e.labels].some((l) => l.innerText.trim()))
                      || e.getAttribute('placeholder') || (e.tagName === 'BUTTON' || e.getAttribute('role')) && e.innerText.trim());
return [...document.querySelectorAll('button, input, select, textarea, [role=button], [role=link], [tabindex="0"]')]
  .filter((e) => e.checkVisibility() && !named(e)).map((e) => `${e.tagName}#${e.id}.${e.className}`);
"""
LANDMARKS = "return ['header', 'nav#rail', 'nav#sidebar', 'main#view', 'aside#members'].filter((s) => !document.querySelector(s))"


def test_the_phone_layout_has_drawers_and_both_themes_keep_aa_contrast(server, people):
    server_id, general = shared_server(server, "bob", "alice")
    bob = JsonPeer(server, "bob")
    bob.request({"sendMessage": {"channelId": general, "body": {"text": "welcome, @alice"}, "mentions": ["alice"]}})
    alice = people()
    sign_in(alice, server, "alice")
    click_channel(alice, general)
    wait(alice, "the message", lambda: count_messages(alice, "welcome, @alice") == 1)
    assert alice.execute_script(UNNAMED) == []
    assert alice.execute_script(LANDMARKS) == []
    for scheme in ["light", "dark"]:
        theme(alice, scheme)
        wait(alice, f"the {scheme} theme", lambda: alice.execute_script("return matchMedia('(prefers-color-scheme: dark)').matches") == (scheme == "dark"))
        assert alice.execute_script(CONTRAST) == [], scheme
        shot(alice, f"channel-desktop-{scheme}.png")
    dark_bg = alice.execute_script("return getComputedStyle(document.getElementById('messages')).backgroundColor")
    theme(alice, "light")
    light_bg = alice.execute_script("return getComputedStyle(document.getElementById('messages')).backgroundColor")
    assert dark_bg != light_bg

    # 360 px wide: no sideways scrolling; the channels and the members are drawers.
    alice.set_window_size(360, 740)
    wait(alice, "the drawer button", lambda: alice.find_element(By.ID, "drawer-open").is_displayed())
    assert alice.execute_script("return document.documentElement.scrollWidth") <= 360
    offscreen = lambda id: alice.find_element(By.ID, id).rect["x"] + alice.find_element(By.ID, id).rect["width"] <= 0
    wait(alice, "the sidebar out of the way", lambda: offscreen("sidebar") and offscreen("rail"))
    shot(alice, "channel-mobile-light.png")
    alice.find_element(By.ID, "drawer-open").click()
    wait(alice, "the sidebar drawn in", lambda: alice.find_element(By.ID, "sidebar").rect["x"] >= 0 and alice.find_element(By.ID, "rail").rect["x"] >= 0)
    assert alice.find_element(By.ID, "drawer-open").get_attribute("aria-expanded") == "true"
    shot(alice, "channels-drawer-mobile.png")
    click_channel(alice, general)
    wait(alice, "the drawer closed on choosing", lambda: offscreen("sidebar"))
    alice.find_element(By.ID, "members-toggle").click()
    wait(alice, "the members drawn in", lambda: 0 <= alice.find_element(By.ID, "members").rect["x"] < 360 and "alice" in text_of(alice, "#member-list"))
    shot(alice, "members-mobile-light.png")
    ActionChains(alice).send_keys(Keys.ESCAPE).perform()
    wait(alice, "Escape closes it", lambda: alice.find_element(By.ID, "members").rect["x"] >= 360)
    theme(alice, "dark")
    assert alice.execute_script(CONTRAST) == []
    shot(alice, "channel-mobile-dark.png")
    bob.close()


def test_groups_day_dividers_the_unread_line_and_its_jump(server, people):
    server_id, general = shared_server(server, "bob", "alice")
    alice = people()
    sign_in(alice, server, "alice")
    click_channel(alice, general)
    bob = JsonPeer(server, "bob")
    for text in ["one", "two", "three"]:
        bob.request({"sendMessage": {"channelId": general, "body": {"text": text}}})
    wait(alice, "bob's three", lambda: count_messages(alice, "three") == 1)
    # One group under one name and avatar, below "Today".
    assert alice.execute_script("return [...document.querySelectorAll('#messages .message')].map(m => m.classList.contains('first'))") == [True, False, False]
    assert text_of(alice, "#messages .day") == "Today"
    send(alice, "mine now")
    assert alice.execute_script("return document.querySelector('#messages .message:last-child').classList.contains('first')")

    # alice goes elsewhere; 80 messages come; back, she is at the newest, with a way to the first unread.
    other = bob.request({"createChannel": {"serverId": server_id, "name": "elsewhere"}})["channel"]["channelId"]
    click_channel(alice, other)
    wait(alice, "elsewhere open", lambda: text_of(alice, "#view-title") == "# elsewhere")
    for i in range(80):
        bob.request({"sendMessage": {"channelId": general, "body": {"text": f"news {i:02}"}}})
    click_channel(alice, general)
    wait(alice, "the newest", lambda: count_messages(alice, "news 79") == 1)
    wait(alice, "the jump to the first unread", lambda: alice.find_element(By.ID, "jump-unread").is_displayed())
    alice.find_element(By.ID, "jump-unread").click()
    wait(alice, "the new line in view", lambda: alice.execute_script(
        "const l = document.getElementById('new-line'), b = document.getElementById('messages');"
        "return !!l && l.offsetTop >= b.scrollTop - 2 && l.offsetTop < b.scrollTop + b.clientHeight"))
    assert alice.execute_script("return document.getElementById('new-line').nextElementSibling.querySelector('.text').innerText") == "news 00"
    assert alice.execute_script("return document.getElementById('new-line').textContent") == "New messages"
    shot(alice, "unread-line.png")
    bob.close()


def test_keyboard_only_sending_editing_reacting_and_a_thread(server, people):
    server_id, general = shared_server(server, "bob", "alice")
    alice = people()
    sign_in(alice, server, "alice")
    click_channel(alice, general)
    wait(alice, "the composer", lambda: alice.find_element(By.ID, "text").is_displayed())
    keys = lambda *k: ActionChains(alice).send_keys(*k).perform()
    focused = lambda: alice.execute_script("const e = document.activeElement; return e.id || e.className")
    # After a reload (still signed in): the skip link is the first stop; Tab reaches the channel, Enter opens it
    # and puts the caret in the message box.
    alice.refresh()
    wait(alice, "signed in again", lambda: text_of(alice, "#connection") == "connected" and alice.find_elements(By.CSS_SELECTOR, "li.channel"))
    keys(Keys.TAB)
    assert focused() == "skip"
    for _ in range(40):
        if "channel" in focused():
            break
        keys(Keys.TAB)
    keys(Keys.ENTER)
    wait(alice, "the message box focused", lambda: focused() == "text")
    keys("typed, not clicked", Keys.ENTER)
    wait(alice, "sent", lambda: count_messages(alice, "typed, not clicked") == 1)
    # Up edits the last message in place; Escape leaves it; Up again, then Enter saves.
    keys(Keys.ARROW_UP)
    wait(alice, "the edit field", lambda: focused() == "" and alice.find_elements(By.CSS_SELECTOR, ".edit-box input"))
    keys(" (oops)", Keys.ESCAPE)
    wait(alice, "unchanged", lambda: count_messages(alice, "typed, not clicked") == 1 and not alice.find_elements(By.CSS_SELECTOR, ".edit-box"))
    assert focused() == "text"
    keys(Keys.ARROW_UP)
    wait(alice, "the edit field again", lambda: alice.find_elements(By.CSS_SELECTOR, ".edit-box input"))
    keys(" and edited", Keys.ENTER)
    wait(alice, "edited", lambda: part_of(alice, "typed, not clicked and edited", ".edited") == "(edited)")

    # From the list of messages: Up and Down move, Tab reaches the focused message's actions, the picker takes arrows.
    alice.find_element(By.ID, "messages").send_keys(Keys.ARROW_UP)
    wait(alice, "a message focused", lambda: "message" in focused())
    actions = alice.execute_script("return [...document.activeElement.querySelectorAll('.actions button')].map(b => b.className)")
    for _ in range(actions.index("react-action") + 1):
        keys(Keys.TAB)
    assert focused() == "react-action"
    keys(Keys.ENTER)
    wait(alice, "the picker", lambda: alice.find_element(By.ID, "emoji-picker").is_displayed() and focused() == "emoji")
    keys(Keys.ARROW_RIGHT, Keys.ENTER)
    wait(alice, "a heart", lambda: "❤️ 1" in (part_of(alice, "typed, not clicked and edited", ".reactions") or ""))
    assert not alice.find_element(By.ID, "emoji-picker").is_displayed()
    # Who reacted shows on the reaction's hover.
    reaction = "[...document.querySelectorAll('#messages .message')].find(m => m.querySelector('.text')?.innerText.startsWith('typed')).querySelector('.reaction')"
    ActionChains(alice).move_to_element(alice.execute_script(f"return {reaction}")).perform()
    wait(alice, "who reacted", lambda: alice.execute_script(f"return {reaction}.title") == "❤️ alice")

    # A thread: its replies in the pane, the root counting them; bob's reply comes live.
    alice.execute_script(f"setTimeout(() => {{ const m = [...document.querySelectorAll('#messages .message')].find(m => m.querySelector('.text').innerText.startsWith('typed')); m.querySelector('.thread-action').click(); }})")
    wait(alice, "the thread pane", lambda: alice.find_element(By.ID, "thread").is_displayed() and focused() == "thread-text")
    keys("in the thread", Keys.ENTER)
    wait(alice, "the reply in the pane", lambda: "in the thread" in text_of(alice, "#thread-list"))
    root = alice.execute_script("return document.querySelector('#thread-root .message').dataset.uid")
    bob = JsonPeer(server, "bob")
    bob.request({"sendMessage": {"channelId": general, "body": {"text": "me too"}, "threadRoot": root}})
    wait(alice, "bob's reply", lambda: "me too" in text_of(alice, "#thread-list"))
    wait(alice, "the root counts 2", lambda: part_of(alice, "typed, not clicked and edited", ".thread-link") == "2 replies")
    assert count_messages(alice, "in the thread") == 0, "thread replies stay in the pane"
    shot(alice, "thread.png")
    bob.close()


def test_quotes_mentions_the_people_picker_and_a_server_with_an_icon(server, people, tmp_path):
    server_id, general = shared_server(server, "bob", "alice", "carol", "dave")
    bob = JsonPeer(server, "bob")
    bob.request({"setProfile": {"displayName": "Bob Builder"}})
    first = bob.request({"sendMessage": {"channelId": general, "body": {"text": "the original"}}})["message"]
    for i in range(60):
        bob.request({"sendMessage": {"channelId": general, "body": {"text": f"filler {i}"}}})
    bob.request({"sendMessage": {"channelId": general, "body": {"text": "quoting it"}, "replyTo": first["uid"]}})
    alice = people()
    sign_in(alice, server, "alice")
    click_channel(alice, general)
    wait(alice, "the quote", lambda: "the original" in (part_of(alice, "quoting it", ".reply") or ""))
    assert count_messages(alice, "the original") == 0
    alice.execute_script(f"setTimeout(() => [...document.querySelectorAll('#messages .message')].find(m => m.querySelector('.text').innerText === 'quoting it').querySelector('.reply').click())")
    wait(alice, "the original shown and marked", lambda: alice.execute_script(
        "const m = document.querySelector(`#messages .message[data-uid='%s']`); return !!m && m.classList.contains('focus')" % first["uid"]))

    # "@" lists the members by name; the one chosen is mentioned, and bob is told.
    wait(alice, "the member list", lambda: "Bob Builder" in text_of(alice, "#member-list"))
    field = alice.find_element(By.ID, "text")
    field.send_keys("hey @Bo")
    wait(alice, "the suggestion", lambda: text_of(alice, "#mention-suggestions") and "Bob Builder" in text_of(alice, "#mention-suggestions"))
    assert "everyone" not in text_of(alice, "#mention-suggestions"), "only those with the bit may mention everyone"
    field.send_keys(Keys.ENTER)
    wait(alice, "the mention written", lambda: field.get_attribute("value") == "hey @bob ")
    field.send_keys("look", Keys.ENTER)
    got = bob.event("message", where=lambda m: m.get("body", {}).get("text") == "hey @bob look")
    assert got["message"]["mentions"] == ["bob"]
    wait(alice, "the mention shown by name", lambda: alice.execute_script(
        "return [...document.querySelectorAll('#messages .message .mention')].map(e => e.innerText)") == ["@Bob Builder"])

    # The people picker finds carol by name among server-mates and opens the conversation.
    open_home(alice)
    alice.find_element(By.ID, "dm-peer").send_keys("car")
    wait(alice, "carol suggested", lambda: "carol" in (text_of(alice, "#dm-suggestions") or ""))
    alice.find_element(By.ID, "dm-peer").send_keys(Keys.ENTER)
    wait(alice, "the conversation with carol", lambda: text_of(alice, "#view-title") == "@ carol")
    # A group from picked people.
    alice.find_element(By.CSS_SELECTOR, "#group-create-box summary").click()
    alice.find_element(By.ID, "group-create-name").send_keys("Planning")
    for name in ["Bob", "car"]:
        alice.find_element(By.ID, "group-create-users").send_keys(name)
        wait(alice, f"{name} suggested", lambda: name.lower() in (text_of(alice, "#group-suggestions") or "").lower()
             and alice.find_element(By.ID, "group-suggestions").is_displayed())
        alice.find_element(By.ID, "group-create-users").send_keys(Keys.ENTER)
    wait(alice, "two chosen", lambda: len(alice.find_elements(By.CSS_SELECTOR, "#group-create-chosen li")) == 2)
    alice.find_element(By.CSS_SELECTOR, "#group-create-form > button").click()
    wait(alice, "the group open", lambda: text_of(alice, "#view-title") == "Planning (3)")
    # The group's panel adds someone found by name.
    alice.find_element(By.ID, "group-add-users").send_keys("dav")
    wait(alice, "dave suggested", lambda: "dave" in (text_of(alice, "#group-add-suggestions") or ""))
    alice.find_element(By.ID, "group-add-users").send_keys(Keys.ENTER)
    wait(alice, "dave in the group", lambda: text_of(alice, "#view-title") == "Planning (4)")

    # A server made with an emoji icon shows it on the rail.
    create_server(alice, "Dice Club", icon="🎲")
    wait(alice, "the icon on the rail", lambda: alice.execute_script(
        "return [...document.querySelectorAll('#server-list li.server')].map(s => s.querySelector('.server-icon').innerText)") == ["SG", "🎲"])
    assert text_of(alice, "#server-name") == "Dice Club"
    shot(alice, "server-icons.png")
    # A server made with a picture: uploaded as its icon, shown on the rail.
    picture = tmp_path / "guild.png"
    picture.write_bytes(png(64, 64))
    alice.find_element(By.ID, "add-server").click()
    wait(alice, "the add-server dialog", lambda: alice.find_element(By.ID, "create-server-name").is_displayed())
    alice.find_element(By.ID, "create-server-picture").send_keys(str(picture))
    wait(alice, "the preview", lambda: alice.execute_script("const i = document.querySelector('#create-server-preview img'); return !!i && i.naturalWidth == 64"))
    submit(alice, "create-server-name", "Painters")
    icon = "const s = [...document.querySelectorAll('#server-list li.server')].find(s => s.querySelector('.name').innerText === 'Painters'); const i = s && s.querySelector('.server-icon img'); return i && i.complete ? i.naturalWidth : 0"
    wait(alice, "the picture on the rail", lambda: alice.execute_script(icon) == 64)
    bob.close()


def test_the_javascript_sdk_alone(server, people):
    """A page with no app: the SDK connects, answers requests as promises and hands out events."""
    server_id, general = shared_server(server, "bob", "alice")
    d = people()
    d.get(server.url + "guildhall.d.ts")
    d.set_script_timeout(20)
    got = d.execute_async_script("""
        const [aliceToken, bobToken, serverId, channelId, done] = arguments;
        import('/guildhall.js').then(({ GuildhallConnection }) => {
          const url = `ws://${location.host}/ws`;
          const ready = (gh) => new Promise((resolve) => { gh.addEventListener('ready', ({ detail }) => resolve(detail), { once: true }); gh.connect(); });
          const alice = new GuildhallConnection({ url, token: aliceToken }), bob = new GuildhallConnection({ url, token: bobToken });
          const heard = new Promise((resolve) => alice.addEventListener('message', ({ detail }) => resolve(detail.body.body.text)));
          (async () => {
            const [a] = await Promise.all([ready(alice), ready(bob)]);
            await alice.request({ subscribe: { type: 'CHANNEL_MSG', operation: 'SUBSCRIBE', targets: [{ serverId, channelId }] } });
            const sent = await bob.request({ sendMessage: { channelId, body: { text: 'from the SDK' } } });
            let refused = null;
            try { await alice.request({ getHistory: { channelId: '1', seq: '0', direction: 'BEFORE' } }); } catch (e) { refused = e.code; }
            done({ user: a.login.userId, fresh: a.fresh, seq: sent.message.seq, heard: await heard, refused });
          })().catch((e) => done({ error: e }));
        }, (e) => done({ error: String(e) }));
    """, server.token("alice"), server.token("bob"), server_id, general)
    assert "error" not in got, got
    assert got["user"] == "alice" and got["fresh"] and int(got["seq"]) >= 1
    assert got["heard"] == "from the SDK"
    assert got["refused"] == "NOT_FOUND"


def test_the_page_comes_back_after_the_server_restarts(tmp_path, people):
    import socket
    # The same WebSocket port across the restart, as an operator's would be.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = UNLIMITED + [f"ws-listen=127.0.0.1:{port}"]
    server = Server(tmp_path / "data", settings)
    try:
        server_id, general = shared_server(server, "bob", "alice")
        alice = people()
        sign_in(alice, server, "alice")
        click_channel(alice, general)
        wait(alice, "the composer", lambda: alice.find_element(By.ID, "text").is_displayed())
        server.stop()
        wait(alice, "the offline banner", lambda: alice.find_element(By.ID, "offline-banner").is_displayed())
        server = Server(tmp_path / "data", settings)
        wait(alice, "connected again", lambda: text_of(alice, "#connection") == "connected", timeout=30)
        assert not alice.find_element(By.ID, "offline-banner").is_displayed()
        # Back in the channel it showed, subscribed again: bob's next message arrives live, and hers goes out.
        bob = JsonPeer(server, "bob")
        bob.request({"subscribe": {"type": "CHANNEL_MSG", "operation": "SUBSCRIBE", "targets": [{"serverId": server_id, "channelId": general}]}})
        bob.request({"sendMessage": {"channelId": general, "body": {"text": "welcome back"}}})
        wait(alice, "bob's message after the restart", lambda: count_messages(alice, "welcome back") == 1)
        send(alice, "glad to be back")
        assert bob.event("message", where=lambda m: m["senderId"] == "alice")["message"]["body"]["text"] == "glad to be back"
        bob.close()
    finally:
        server.stop()
