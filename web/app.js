// Guildhall's web client (README "Web client"): signing in and staying in,
// one's own profile and status, and the page's wiring. The protocol is
// guildhall.js's; the other modules hold what the page shows:
// lists.js (servers, channels, conversations), view.js (the open channel or
// conversation), messages.js (a message and its operations), composer.js
// (writing, files, typing), members.js (the member list, moderation, the
// audit log), panels.js (pins, webhooks, search), invites.js, events.js.

import { upload, wireComposer } from "./composer.js";
import { handlers } from "./events.js";
import { GuildhallConnection } from "./guildhall.js";
import { wireGroups } from "./groups.js";
import { showInvite, wireInvites } from "./invites.js";
import { closeDrawers, loadConversations, loadMuted, loadServers, renderConversations, wireLists } from "./lists.js";
import { loadMembers, wireMembers } from "./members.js";
import { renderMessages, wireMessages } from "./messages.js";
import { $, gh, showError, state, useConnection } from "./page.js";
import { wirePanels } from "./panels.js";
import { wireReactions } from "./reactions.js";
import { wireThread } from "./thread.js";
import { openView, wireView } from "./view.js";

// ---- sign in and the connection ----

// The token is kept for this tab (sessionStorage), or on this device when
// the user asks to stay signed in (localStorage); signing out forgets both.
const TOKEN_KEY = "guildhall.token";

function keepToken(token, stay) {
  sessionStorage.setItem(TOKEN_KEY, token);
  if (stay) localStorage.setItem(TOKEN_KEY, token); else localStorage.removeItem(TOKEN_KEY);
}

function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
  localStorage.removeItem(TOKEN_KEY);
}

function start(token) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  useConnection(new GuildhallConnection({ url: `${scheme}//${location.host}/ws`, token }));
  window.guildhall = gh; // for the console (and the browser tests' dropped-connection check)
  gh.addEventListener("state", ({ detail }) => {
    const s = $("connection");
    s.className = `state ${detail.state}`;
    s.textContent = detail.state;
    s.title = detail.reason || "";
    // Signed in and not connected: say so where it cannot be missed.
    $("offline-banner").hidden = !state.me || detail.state === "connected" || detail.state === "closed";
    if (detail.state === "closed" && !state.me) {
      // A token that does not sign in (expired, revoked) is not tried again at the next visit.
      forgetToken();
      $("login").hidden = false;
      showError("login-error", { code: "closed", message: detail.reason || "could not sign in" });
    }
  });
  gh.addEventListener("ready", ({ detail }) => ready(detail));
  for (const [kind, handler] of Object.entries(handlers)) gh.addEventListener(kind, ({ detail }) => handler(detail.body, detail.event));
  gh.connect();
}

async function ready({ login, fresh }) {
  state.me = login.userId;
  $("me").textContent = `${login.userId} (${login.deviceId})`;
  $("login").hidden = true;
  $("app").hidden = false;
  $("logout").hidden = false;
  $("presence-label").hidden = false;
  $("profile-box").hidden = false;
  $("drawer-open").hidden = false;
  $("members-toggle").hidden = false;
  $("notify-enable").hidden = !("Notification" in window) || Notification.permission !== "default";
  gh.request({ listBlockedUsers: {} }).then((r) => { state.blocked = new Set(r.userIds.userIds || []); renderConversations(); }).catch(() => {});
  gh.request({ getDmPrivacy: {} }).then((r) => { $("dm-server-mates-only").checked = !!r.dmPrivacy.serverMatesOnly; }).catch(() => {});
  gh.request({ getUsers: { userIds: [state.me] } }).then((r) => {
    const name = r.users.users?.[0]?.displayName || "";
    $("profile-name").value = name;
    if (name) state.names.set(state.me, name);
    $("me").textContent = name ? `${name} · ${login.userId}` : `${login.userId} (${login.deviceId})`;
  }).catch(() => {});
  loadMuted();
  if (!fresh) return; // resumed: the server replayed what was missed and kept the subscriptions
  await loadServers();
  await loadMembers(state.currentServer);
  const invited = location.pathname.match(/^\/invite\/([A-Za-z0-9]+)$/);
  if (invited) showInvite(invited[1]);
  await loadConversations();
  if (state.view) await openView(state.view, true);
}


function wire() {
  $("login-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const token = $("token").value.trim();
    if (!token) return;
    keepToken(token, $("stay-signed-in").checked);
    start(token);
  });
  $("logout").addEventListener("click", () => {
    forgetToken();
    gh?.logout();
    state.me = "";
  });
  $("notify-enable").addEventListener("click", async () => {
    // The browser's own prompt; asked only when the user clicks.
    const answer = await Notification.requestPermission();
    $("notify-enable").hidden = answer !== "default";
  });
  $("profile-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const p = (await gh.request({ setProfile: { displayName: $("profile-name").value.trim() } })).profile;
      if (p.displayName) state.names.set(state.me, p.displayName); else state.names.delete(state.me);
      if (state.currentServer) await loadMembers(state.currentServer);
      renderMessages();
    } catch (err) { showError("view-error", err); }
  });
  $("avatar-input").addEventListener("change", async (e) => {
    const file = e.target.files[0];
    e.target.value = "";
    if (!file) return;
    try {
      // Uploaded as one's own avatar, then named by the profile: a lasting link to it.
      const fileId = await upload({ file, progress: 0 }, "avatar");
      await gh.request({ setProfile: { avatarFileId: fileId } });
      if (state.currentServer) await loadMembers(state.currentServer);
    } catch (err) { showError("view-error", err); }
  });
  $("presence-choice").addEventListener("change", async () => {
    try {
      await gh.request({ setPresence: { status: $("presence-choice").value } });
    } catch (err) { showError("view-error", err); }
  });
  // On a phone the rail and sidebar, and the member list, are drawers; the scrim or Escape closes them.
  const drawer = (name, button) => {
    const open = !document.body.classList.contains(name);
    closeDrawers();
    document.body.classList.toggle(name, open);
    $("scrim").hidden = !open;
    button.setAttribute("aria-expanded", String(open));
    if (open) (name === "drawer-open" ? $("sidebar") : $("members")).querySelector("input, button, li[tabindex]")?.focus();
  };
  $("drawer-open").addEventListener("click", () => drawer("drawer-open", $("drawer-open")));
  $("members-toggle").addEventListener("click", () => drawer("members-open", $("members-toggle")));
  $("scrim").addEventListener("click", () => closeDrawers());
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("scrim").hidden) closeDrawers(); });
  for (const w of [wireLists, wireGroups, wireInvites, wireMembers, wireView, wireMessages, wireReactions, wireThread, wireComposer, wirePanels]) w();
  const token = new URLSearchParams(location.search).get("token");
  if (token) {
    // Out of the address bar (and history) once read; kept for this tab.
    history.replaceState(null, "", location.pathname);
    keepToken(token, false);
    start(token);
  } else {
    const kept = sessionStorage.getItem(TOKEN_KEY) || localStorage.getItem(TOKEN_KEY);
    if (kept) start(kept);
  }
}

wire();
