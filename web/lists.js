// The lists on the left: servers with their unread and mention badges,
// a server's channels, direct and group conversations, and the users one
// blocks. May touch the page state and the connection.

import { badgeText } from "./guildhall.js";
import { upload } from "./composer.js";
import { loadMembers } from "./members.js";
import { renderMessages } from "./messages.js";
import { $, el, gh, nameOf, showError, state } from "./page.js";
import { renderGroup } from "./groups.js";
import { findPeople } from "./people.js";
import { attachPicker } from "./picker.js";
import { openView } from "./view.js";

export async function loadServers() {
  const r = await gh.request({ listMyServers: {} });
  const servers = r.servers.servers || [];
  state.servers = new Map();
  for (const info of servers) state.servers.set(info.serverId, { info, channels: new Map() });
  const ids = [];
  for (const s of state.servers.values()) {
    const c = await gh.request({ listChannels: { serverId: s.info.serverId } });
    for (const ch of c.channels.channels || []) {
      s.channels.set(ch.channelId, ch);
      ids.push({ serverId: s.info.serverId, channelId: ch.channelId });
    }
  }
  for (let i = 0; i < ids.length; i += 100) {
    const part = ids.slice(i, i + 100);
    const u = await gh.request({ getUnread: { channelIds: part.map((t) => t.channelId) } });
    for (const info of u.unreads.unreads || []) state.unread.set(info.channelId, info);
    // Unread counts of every channel stay live; messages only for the channel shown.
    await gh.request({ subscribe: { type: "CHANNEL_UNREAD_COUNT", operation: "SUBSCRIBE", targets: part } });
  }
  if (!state.currentServer && state.servers.size) state.currentServer = state.servers.keys().next().value;
  // Someone in no server yet starts at their conversations.
  if (!state.servers.size) state.home = true;
  renderServers();
  renderChannels();
}

export async function loadConversations() {
  const r = await gh.request({ listConversations: {} });
  state.conversations = new Map((r.conversations.conversations || []).map((c) => [c.conversationId, c]));
  renderConversations();
}

// ---- the lists ----

export function serverUnread(serverId) {
  let unread = 0, mentions = 0, cap = 99;
  for (const chId of state.servers.get(serverId)?.channels.keys() || []) {
    const u = state.unread.get(chId);
    if (!u) continue;
    // A muted channel still counts its mentions, not its messages.
    if (!isMuted(chId)) unread += Number(u.unreadCount || 0);
    mentions += Number(u.mentionedCount || 0);
    cap = Number(u.maxCount || cap);
  }
  return { unread, mentions, cap };
}

// Muting is this device's choice (kept in localStorage): a muted channel is
// greyed, its messages neither count in its server's badge and the title nor notify; mentions still do.
const MUTED_KEY = "guildhall.muted";

export function isMuted(channelId) { return state.muted.has(channelId); }

export function setMuted(channelId, muted) {
  if (muted) state.muted.add(channelId); else state.muted.delete(channelId);
  localStorage.setItem(MUTED_KEY, JSON.stringify([...state.muted]));
  renderServers();
  renderChannels();
}

export function loadMuted() {
  try { state.muted = new Set(JSON.parse(localStorage.getItem(MUTED_KEY) || "[]")); } catch { state.muted = new Set(); }
}

/** A server's icon: its image, its emoji, or its name's initials. */
export function serverIcon(info) {
  const icon = (info.icon || info.serverIcon || "").trim();
  if (/^(https?:\/\/|\/|data:image\/)/.test(icon)) return el("span", { class: "server-icon" }, el("img", { src: icon, alt: "" }));
  const name = info.name || info.serverName || "?";
  // As chat apps do: the first letter of each word ("Guild of Tests": "GoT").
  const initials = icon || name.split(/\s+/).filter(Boolean).slice(0, 3).map((w) => [...w][0]).join("");
  return el("span", { class: `server-icon${[...initials].length > 2 ? " small" : ""}`, "aria-hidden": "true" }, initials);
}

export function renderServers() {
  renderTitle();
  $("home-button").classList.toggle("current", state.home);
  let directUnread = 0;
  for (const c of state.conversations.values()) directUnread += Number(c.unreadCount || 0);
  $("home-badge").textContent = badgeText(directUnread, 99);
  $("server-list").replaceChildren(...[...state.servers.values()].map((s) => {
    const { unread, mentions, cap } = serverUnread(s.info.serverId);
    const current = !state.home && s.info.serverId === state.currentServer;
    return el("li", { class: `server${current ? " current" : ""}${unread ? " unread" : ""}`, dataset: { id: s.info.serverId },
                      tabindex: 0, role: "button", title: s.info.name, "aria-current": current ? "true" : null,
                      onclick: () => chooseServer(s.info.serverId), onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); chooseServer(s.info.serverId); } } },
      serverIcon(s.info),
      el("span", { class: "name" }, s.info.name),
      el("span", { class: "badges" }, el("span", { class: "badge mention", "aria-label": mentions ? `${mentions} mentions` : null }, mentions ? `@${badgeText(mentions, cap)}` : ""),
                     el("span", { class: "badge unread", "aria-label": unread ? `${unread} unread` : null }, badgeText(unread, cap))));
  }));
  renderSidebar();
}

/** The sidebar shows the chosen server's channels, or (home) one's conversations. */
export function renderSidebar() {
  $("server-pane").hidden = state.home;
  $("home-pane").hidden = !state.home;
}

export function chooseServer(serverId) {
  state.home = false;
  state.currentServer = serverId;
  renderServers();
  renderChannels();
  loadMembers(serverId);
}

export function chooseHome() {
  state.home = true;
  renderServers();
}

export function renderChannels() {
  const s = state.servers.get(state.currentServer);
  $("server-name").textContent = s ? s.info.name : "No server chosen";
  const members = Number(s?.info.memberCount || 0);
  $("server-id").textContent = s ? `${members} member${members === 1 ? "" : "s"}` : "Add a server with + on the left.";
  $("server-id").title = s ? `id ${s.info.serverId}` : "";
  $("create-channel-form").hidden = !s || s.info.ownerId !== state.me;
  $("invite-people").hidden = !s;
  $("search-form").hidden = !s;
  if (state.auditFor !== state.currentServer) { $("audit").hidden = true; state.auditFor = state.currentServer; }
  if (state.invitesFor !== state.currentServer) { $("invite-made").hidden = true; state.invitesFor = state.currentServer; }
  $("channel-list").replaceChildren(...(s ? [...s.channels.values()] : []).map((ch) => {
    const u = state.unread.get(ch.channelId) || {};
    const current = state.view?.kind === "channel" && state.view.channelId === ch.channelId;
    const muted = isMuted(ch.channelId);
    const open = () => { closeDrawers(); return openView({ kind: "channel", serverId: ch.serverId, channelId: ch.channelId }); };
    return el("li", { class: `channel${current ? " current" : ""}${muted ? " muted-channel" : ""}`, dataset: { id: ch.channelId },
                      tabindex: 0, role: "link", "aria-current": current ? "page" : null,
                      // Chosen from the keyboard, the caret goes on to the message box.
                      onclick: open, onkeydown: (e) => { if (e.key === "Enter") open().then(() => $("text").focus()); } },
      el("span", { class: "name" }, `# ${ch.name}`, muted ? el("span", { class: "sr-only" }, " (muted)") : null),
      el("span", {}, el("span", { class: "badge mention" }, Number(u.mentionedCount || 0) ? `@${badgeText(u.mentionedCount, u.maxCount)}` : ""),
                     el("span", { class: "badge unread" }, muted ? "" : badgeText(u.unreadCount, u.maxCount))));
  }));
}

/** A conversation's name in lists and titles: the peer's, or a group's with its size. */
export function conversationName(c) {
  return c.isGroup ? `${c.name} (${(c.memberIds || []).length})` : `@ ${nameOf(c.peerId || "")}`;
}

/** The tab's title counts what is unread: every channel's and conversation's ("99+" past 99). */
export function renderTitle() {
  let total = 0;
  for (const [channelId, u] of state.unread) if (!isMuted(channelId)) total += Number(u.unreadCount || 0);
  for (const c of state.conversations.values()) total += Number(c.unreadCount || 0);
  document.title = total ? `(${total > 99 ? "99+" : total}) Guildhall` : "Guildhall";
}

/** A desktop notification for a mention or a direct message, while the tab is hidden and the user allowed them. */
export function notifyHidden(m, direct) {
  if (document.visibilityState !== "hidden" || m.senderId === state.me) return;
  if (!direct && !(m.mentions || []).includes(state.me) && !m.mentionAll) return;
  if (direct && state.blocked.has(m.senderId)) return;
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  const who = m.webhook?.name || nameOf(m.senderId);
  new Notification(direct ? who : `${who} mentioned you`, { body: (m.body?.text || "a file").slice(0, 200), tag: m.channelId });
}

export function renderConversations() {
  renderServers();
  $("dm-list").replaceChildren(...[...state.conversations.values()].map((c) => {
    const current = state.view?.kind === "dm" && state.view.conversationId === c.conversationId;
    const open = () => { openView({ kind: "dm", conversationId: c.conversationId, peerId: c.peerId || "" }); closeDrawers(); };
    return el("li", { class: `conversation${current ? " current" : ""}${c.isGroup ? " group" : ""}`, dataset: { id: c.conversationId, peer: c.peerId || "" },
                      tabindex: 0, role: "link", "aria-current": current ? "page" : null, onclick: open, onkeydown: (e) => { if (e.key === "Enter") open(); } },
      el("span", { class: "name" }, conversationName(c)), el("span", { class: "badge unread" }, badgeText(c.unreadCount, 99)));
  }));
  renderGroup();
  $("blocked-list").replaceChildren(...[...state.blocked].sort().map((user) => el("li", { class: "blocked", dataset: { user } },
    el("span", { class: "name" }, nameOf(user)), " ",
    el("button", { type: "button", class: "unblock-action", onclick: () => setBlocked(user, false) }, "Unblock"))));
  if (!state.blocked.size) $("blocked-list").replaceChildren(el("li", { class: "muted" }, "nobody"));
  if (state.view?.kind === "dm") $("block-peer").textContent = state.blocked.has(state.view.peerId) ? "Unblock" : "Block";
}

/** Nothing open (the conversation shown went away). */
export function closeView() {
  state.view = null;
  state.messages = [];
  $("view-title").textContent = "Choose a channel or a conversation";
  $("composer").hidden = true;
  $("block-peer").hidden = true;
  renderMessages();
  renderConversations();
}

/// Blocks or unblocks `user`; the list and the open conversation's button follow.
export async function setBlocked(user, blocks) {
  if (blocks && !confirm(`Block ${nameOf(user)}? Their messages stop reaching you.`)) return;
  try {
    await gh.request(blocks ? { blockUser: { userId: user } } : { unblockUser: { userId: user } });
    if (blocks) state.blocked.add(user); else state.blocked.delete(user);
    renderConversations();
  } catch (err) { showError("view-error", err); }
}

/** On a phone: the drawers close once something in them was chosen. */
export function closeDrawers() {
  document.body.classList.remove("drawer-open", "members-open");
  $("scrim").hidden = true;
  $("drawer-open").setAttribute("aria-expanded", "false");
  $("members-toggle").setAttribute("aria-expanded", "false");
}

/** Hooks this module's controls to the page. */
export function wireLists() {
  $("block-peer").addEventListener("click", () => {
    const peer = state.view?.peerId;
    if (peer) setBlocked(peer, !state.blocked.has(peer));
  });
  $("home-button").addEventListener("click", () => chooseHome());
  $("add-server").addEventListener("click", () => { showError("add-server-error", null); $("add-server-dialog").showModal(); $("create-server-name").focus(); });
  $("add-server-close").addEventListener("click", () => $("add-server-dialog").close());
  const preview = (icon) => $("create-server-preview").replaceWith(Object.assign(serverIcon({ name: $("create-server-name").value, icon }), { id: "create-server-preview" }));
  $("create-server-icon").addEventListener("input", () => { $("create-server-picture").value = ""; preview($("create-server-icon").value); });
  $("create-server-picture").addEventListener("change", () => {
    const file = $("create-server-picture").files[0];
    if (!file) return;
    $("create-server-icon").value = "";
    // Shown as a data: URL (the page's policy loads no blob: pictures).
    const reader = new FileReader();
    reader.onload = () => preview(reader.result);
    reader.readAsDataURL(file);
  });
  $("join-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      // An invite link (or its code) joins through the invite; a bare id joins an open server.
      const text = $("join-id").value.trim();
      const code = text.match(/\/invite\/([A-Za-z0-9]+)\/?$/)?.[1] || (/^\d+$/.test(text) ? null : text);
      const id = code ? (await gh.request({ joinByInvite: { code } })).inviteCode.serverId : text;
      if (!code) await gh.request({ joinServer: { serverId: id } });
      $("join-id").value = "";
      $("add-server-dialog").close();
      await loadServers();
      chooseServer(id);
    } catch (err) { showError("add-server-error", err); }
  });
  $("create-server-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await gh.request({ createServer: { name: $("create-server-name").value.trim(), icon: $("create-server-icon").value.trim(), openJoin: true } });
      // A picture is uploaded as the new server's icon, then named by it.
      const picture = $("create-server-picture").files[0];
      if (picture) {
        const fileId = await upload({ file: picture, progress: 0 }, { serverIcon: r.server.serverId });
        await gh.request({ updateServer: { serverId: r.server.serverId, iconFileId: fileId } });
      }
      $("create-server-name").value = "";
      $("create-server-icon").value = "";
      $("create-server-picture").value = "";
      $("add-server-dialog").close();
      state.currentServer = r.server.serverId;
      await loadServers();
      chooseServer(r.server.serverId);
    } catch (err) { showError("add-server-error", err); }
  });
  $("create-channel-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await gh.request({ createChannel: { serverId: state.currentServer, name: $("create-channel-name").value.trim() } });
      $("create-channel-name").value = "";
      await loadServers();
    } catch (err) { showError("view-error", err); }
  });
  $("dm-server-mates-only").addEventListener("change", async (e) => {
    try {
      const r = await gh.request({ setDmPrivacy: { serverMatesOnly: e.target.checked } });
      e.target.checked = !!r.dmPrivacy.serverMatesOnly;
    } catch (err) { e.target.checked = !e.target.checked; showError("view-error", err); }
  });
  // Find someone by name (or type their id) and open the conversation with them.
  const openWith = async (peerId) => {
    try {
      const r = await gh.request({ openConversation: { peerId } });
      $("dm-peer").value = "";
      state.conversations.set(r.conversation.conversationId, r.conversation);
      await openView({ kind: "dm", conversationId: r.conversation.conversationId, peerId: r.conversation.peerId });
      closeDrawers();
    } catch (err) { showError("view-error", err); }
  };
  attachPicker($("dm-peer"), $("dm-suggestions"), { suggest: (text) => findPeople(text), choose: (item) => openWith(item.key) });
  $("dm-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("dm-peer").value.trim();
    if (text) findPeople(text).then((found) => openWith(found.find((x) => x.label.toLowerCase() === text.toLowerCase())?.key || text));
  });

}
