// The lists on the left: servers with their unread and mention badges,
// a server's channels, direct and group conversations, the open group's
// panel, and the users one blocks. May touch the page state and the connection.

import { badgeText } from "./guildhall.js";
import { loadMembers } from "./members.js";
import { renderMessages } from "./messages.js";
import { $, el, gh, nameOf, showError, state, userList } from "./page.js";
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
    unread += Number(u.unreadCount || 0);
    mentions += Number(u.mentionedCount || 0);
    cap = Number(u.maxCount || cap);
  }
  return { unread, mentions, cap };
}

export function renderServers() {
  renderTitle();
  $("server-list").replaceChildren(...[...state.servers.values()].map((s) => {
    const { unread, mentions, cap } = serverUnread(s.info.serverId);
    return el("li", { class: `server${s.info.serverId === state.currentServer ? " current" : ""}`, dataset: { id: s.info.serverId },
                      onclick: () => { state.currentServer = s.info.serverId; renderServers(); renderChannels(); loadMembers(s.info.serverId); } },
      el("span", { class: "name" }, s.info.name),
      el("span", {}, el("span", { class: "badge mention" }, mentions ? `@${badgeText(mentions, cap)}` : ""),
                     el("span", { class: "badge unread" }, badgeText(unread, cap))));
  }));
}

export function renderChannels() {
  const s = state.servers.get(state.currentServer);
  $("server-name").textContent = s ? s.info.name : "No server chosen";
  const members = Number(s?.info.memberCount || 0);
  $("server-id").textContent = s ? `id ${s.info.serverId} · ${members} member${members === 1 ? "" : "s"}` : "";
  $("create-channel-form").hidden = !s || s.info.ownerId !== state.me;
  $("invite-people").hidden = !s;
  if (state.auditFor !== state.currentServer) { $("audit").hidden = true; state.auditFor = state.currentServer; }
  if (state.invitesFor !== state.currentServer) { $("invite-made").hidden = true; state.invitesFor = state.currentServer; }
  $("channel-list").replaceChildren(...(s ? [...s.channels.values()] : []).map((ch) => {
    const u = state.unread.get(ch.channelId) || {};
    const current = state.view?.kind === "channel" && state.view.channelId === ch.channelId;
    return el("li", { class: `channel${current ? " current" : ""}`, dataset: { id: ch.channelId },
                      onclick: () => openView({ kind: "channel", serverId: ch.serverId, channelId: ch.channelId }) },
      el("span", { class: "name" }, `# ${ch.name}`),
      el("span", {}, el("span", { class: "badge mention" }, Number(u.mentionedCount || 0) ? `@${badgeText(u.mentionedCount, u.maxCount)}` : ""),
                     el("span", { class: "badge unread" }, badgeText(u.unreadCount, u.maxCount))));
  }));
}

/** A conversation's name in lists and titles: the peer's, or a group's with its size. */
export function conversationName(c) {
  return c.isGroup ? `${c.name} (${(c.memberIds || []).length})` : `@ ${nameOf(c.peerId || "")}`;
}

/** The tab's title counts what is unread: every channel's and conversation's ("99+" past 99). */
export function renderTitle() {
  let total = 0;
  for (const u of state.unread.values()) total += Number(u.unreadCount || 0);
  for (const c of state.conversations.values()) total += Number(c.unreadCount || 0);
  document.title = total ? `(${total > 99 ? "99+" : total}) Guildhall` : "Guildhall";
}

/** A desktop notification for a mention or a direct message, while the tab is hidden and the user allowed them. */
export function notifyHidden(m, direct) {
  if (document.visibilityState !== "hidden" || m.senderId === state.me) return;
  if (!direct && !(m.mentions || []).includes(state.me) && !m.mentionAll) return;
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  const who = m.webhook?.name || nameOf(m.senderId);
  new Notification(direct ? who : `${who} mentioned you`, { body: (m.body?.text || "a file").slice(0, 200), tag: m.channelId });
}

export function renderConversations() {
  renderTitle();
  $("dm-list").replaceChildren(...[...state.conversations.values()].map((c) => {
    const current = state.view?.kind === "dm" && state.view.conversationId === c.conversationId;
    return el("li", { class: `conversation${current ? " current" : ""}${c.isGroup ? " group" : ""}`, dataset: { id: c.conversationId, peer: c.peerId || "" },
                      onclick: () => openView({ kind: "dm", conversationId: c.conversationId, peerId: c.peerId || "" }) },
      el("span", { class: "name" }, conversationName(c)), el("span", { class: "badge unread" }, badgeText(c.unreadCount, 99)));
  }));
  renderGroup();
  $("blocked-list").replaceChildren(...[...state.blocked].sort().map((user) => el("li", { class: "blocked", dataset: { user } },
    el("span", { class: "name" }, nameOf(user)), " ",
    el("button", { type: "button", class: "unblock-action", onclick: () => setBlocked(user, false) }, "Unblock"))));
  if (!state.blocked.size) $("blocked-list").replaceChildren(el("li", { class: "muted" }, "nobody"));
  if (state.view?.kind === "dm") $("block-peer").textContent = state.blocked.has(state.view.peerId) ? "Unblock" : "Block";
}

/** The open group's panel: its members (the owner may remove them), rename and add where allowed, and leave. */
export function renderGroup() {
  const c = state.view?.kind === "dm" ? state.conversations.get(state.view.conversationId) : null;
  $("group").hidden = !c?.isGroup;
  if (!c?.isGroup) return;
  const owner = c.ownerId === state.me;
  $("group-title").textContent = c.name;
  $("group-rename-form").hidden = !owner;
  if (document.activeElement !== $("group-rename")) $("group-rename").value = c.name;
  $("group-add-form").hidden = !(owner || c.membersMayAdd);
  $("group-members").replaceChildren(...(c.memberIds || []).map((user) => el("li", { class: "group-member", dataset: { user } },
    el("span", { class: "name" }, nameOf(user)), user === c.ownerId ? el("span", { class: "muted" }, " owner") : null,
    owner && user !== state.me
      ? el("button", { type: "button", class: "group-remove", "aria-label": `remove ${nameOf(user)} from the group`,
                       onclick: () => groupChange({ removeGroupMember: { conversationId: c.conversationId, userId: user } }) }, "Remove")
      : null)));
}

/** Sends a change to the open group; the group as it is then replaces the one shown. */
export async function groupChange(request) {
  try {
    const r = await gh.request(request);
    if (r.conversation) state.conversations.set(r.conversation.conversationId, r.conversation);
    renderConversations();
    if (state.view?.kind === "dm" && r.conversation?.conversationId === state.view.conversationId) {
      $("view-title").textContent = conversationName(r.conversation);
    }
  } catch (err) { showError("view-error", err); }
}

/** Comma or space separated user ids. */
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

/** Hooks this module's controls to the page. */
export function wireLists() {
  $("block-peer").addEventListener("click", () => {
    const peer = state.view?.peerId;
    if (peer) setBlocked(peer, !state.blocked.has(peer));
  });
  $("join-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const id = $("join-id").value.trim();
      await gh.request({ joinServer: { serverId: id } });
      $("join-id").value = "";
      await loadServers();
      state.currentServer = id;
      renderServers();
      renderChannels();
      await loadMembers(id);
    } catch (err) { showError("view-error", err); }
  });
  $("create-server-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await gh.request({ createServer: { name: $("create-server-name").value.trim(), openJoin: true } });
      $("create-server-name").value = "";
      state.currentServer = r.server.serverId;
      await loadServers();
      await loadMembers(r.server.serverId);
    } catch (err) { showError("view-error", err); }
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
  $("group-create-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await gh.request({ createGroup: { name: $("group-create-name").value.trim(), userIds: userList($("group-create-users").value) } });
      $("group-create-name").value = "";
      $("group-create-users").value = "";
      $("group-create-box").open = false;
      state.conversations.set(r.conversation.conversationId, r.conversation);
      await openView({ kind: "dm", conversationId: r.conversation.conversationId, peerId: "" });
    } catch (err) { showError("view-error", err); }
  });
  $("group-rename-form").addEventListener("submit", (e) => {
    e.preventDefault();
    groupChange({ updateGroup: { conversationId: state.view.conversationId, name: $("group-rename").value.trim() } });
  });
  $("group-add-form").addEventListener("submit", (e) => {
    e.preventDefault();
    groupChange({ addGroupMembers: { conversationId: state.view.conversationId, userIds: userList($("group-add-users").value) } });
    $("group-add-users").value = "";
  });
  $("group-leave").addEventListener("click", async () => {
    const id = state.view?.conversationId;
    if (!id || !confirm("Leave this group? You will no longer see it.")) return;
    try {
      await gh.request({ leaveGroup: { conversationId: id } });
      state.conversations.delete(id);
      closeView();
      renderConversations();
    } catch (err) { showError("view-error", err); }
  });
  $("dm-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const r = await gh.request({ openConversation: { peerId: $("dm-peer").value.trim() } });
      $("dm-peer").value = "";
      state.conversations.set(r.conversation.conversationId, r.conversation);
      await openView({ kind: "dm", conversationId: r.conversation.conversationId, peerId: r.conversation.peerId });
    } catch (err) { showError("view-error", err); }
  });
}
