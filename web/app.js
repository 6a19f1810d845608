// Guildhall's web client (README "Web client"): servers and channels with unread and
// mention badges, a channel's history paged upward with live messages,
// sending, typing, marking read at the bottom, group read receipts ("read by
// k of N" and the readers), direct conversations with sent/delivered/read
// ticks, the message operations (reply, edit, recall, delete, reactions),
// files (attach, drop or paste; uploaded with progress, then sent; images,
// audio and video shown, other files as links), search in a server, and the
// server's member list with each member's presence and name (a watched page:
// joins, leaves, role, name and presence changes come live) and one's own
// status and display name; moderation from the member list (time out, kick,
// ban, with a reason) and the server's audit log; one's nickname in a server;
// blocking and unblocking direct peers.
// The protocol is guildhall.js's; this file holds what the page shows and
// redraws it from that state.

import { GuildhallConnection, badgeText } from "./guildhall.js";

const $ = (id) => document.getElementById(id);
const REACTIONS = { 1: "👍", 2: "❤️", 3: "😂", 4: "🎉" };
const PAGE = 50;

const state = {
  me: "",
  servers: new Map(),         // serverId -> {info, channels: Map(channelId -> info)}
  unread: new Map(),          // channelId -> UnreadInfo
  conversations: new Map(),   // conversationId -> Conversation
  currentServer: null,
  view: null,                 // {kind: "channel", serverId, channelId} | {kind: "dm", conversationId, peerId} (peerId "" for a group)
  messages: [],               // the view's messages, oldest first
  moreAbove: false,
  loadingAbove: false,
  moreBelow: false,           // the view shows an older stretch (a search hit's): newer messages are not loaded
  focus: null,                // the uid of the message a search jumped to
  typers: new Map(),          // channelId -> [{userId, until}]
  replyTo: null,
  lastTyping: 0,
  pending: [],                // files chosen for the next message: {file, progress}
  sending: false,
  members: null,              // the member pane: {serverId, list, next, memberCount, onlineCount}
  names: new Map(),           // userId -> the name to show (nickname or display name), from member lists and profiles
  blocked: new Set(),         // the users one blocks
};

/// How a user shows: their nickname or display name where known, else their id.
function nameOf(userId) { return state.names.get(userId) || userId; }

function learnNames(members) {
  for (const x of members || []) {
    const name = x.nickname || x.displayName;
    if (name) state.names.set(x.userId, name); else state.names.delete(x.userId);
  }
}

let gh = null;

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function showError(where, err) {
  $(where).textContent = err ? `${err.code || "error"}: ${err.message || err}` : "";
}

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
  gh = new GuildhallConnection({ url: `${scheme}//${location.host}/ws`, token });
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
  $("profile-form").hidden = false;
  $("notify-enable").hidden = !("Notification" in window) || Notification.permission !== "default";
  gh.request({ listBlockedUsers: {} }).then((r) => { state.blocked = new Set(r.userIds.userIds || []); renderConversations(); }).catch(() => {});
  gh.request({ getDmPrivacy: {} }).then((r) => { $("dm-server-mates-only").checked = !!r.dmPrivacy.serverMatesOnly; }).catch(() => {});
  gh.request({ getUsers: { userIds: [state.me] } }).then((r) => {
    const name = r.users.users?.[0]?.displayName || "";
    $("profile-name").value = name;
    if (name) state.names.set(state.me, name);
  }).catch(() => {});
  if (!fresh) return; // resumed: the server replayed what was missed and kept the subscriptions
  await loadServers();
  await loadMembers(state.currentServer);
  const invited = location.pathname.match(/^\/invite\/([A-Za-z0-9]+)$/);
  if (invited) showInvite(invited[1]);
  await loadConversations();
  if (state.view) await openView(state.view, true);
}

async function loadServers() {
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

async function loadConversations() {
  const r = await gh.request({ listConversations: {} });
  state.conversations = new Map((r.conversations.conversations || []).map((c) => [c.conversationId, c]));
  renderConversations();
}

// ---- the lists ----

function serverUnread(serverId) {
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

function renderServers() {
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

function renderChannels() {
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
function conversationName(c) {
  return c.isGroup ? `${c.name} (${(c.memberIds || []).length})` : `@ ${nameOf(c.peerId || "")}`;
}

/** The tab's title counts what is unread: every channel's and conversation's ("99+" past 99). */
function renderTitle() {
  let total = 0;
  for (const u of state.unread.values()) total += Number(u.unreadCount || 0);
  for (const c of state.conversations.values()) total += Number(c.unreadCount || 0);
  document.title = total ? `(${total > 99 ? "99+" : total}) Guildhall` : "Guildhall";
}

/** A desktop notification for a mention or a direct message, while the tab is hidden and the user allowed them. */
function notifyHidden(m, direct) {
  if (document.visibilityState !== "hidden" || m.senderId === state.me) return;
  if (!direct && !(m.mentions || []).includes(state.me) && !m.mentionAll) return;
  if (!("Notification" in window) || Notification.permission !== "granted") return;
  const who = m.webhook?.name || nameOf(m.senderId);
  new Notification(direct ? who : `${who} mentioned you`, { body: (m.body?.text || "a file").slice(0, 200), tag: m.channelId });
}

function renderConversations() {
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
function renderGroup() {
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
async function groupChange(request) {
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
function userList(text) { return text.split(/[\s,]+/).filter(Boolean); }

/** Nothing open (the conversation shown went away). */
function closeView() {
  state.view = null;
  state.messages = [];
  $("view-title").textContent = "Choose a channel or a conversation";
  $("composer").hidden = true;
  $("block-peer").hidden = true;
  renderMessages();
  renderConversations();
}

/// Blocks or unblocks `user`; the list and the open conversation's button follow.
async function setBlocked(user, blocks) {
  if (blocks && !confirm(`Block ${nameOf(user)}? Their messages stop reaching you.`)) return;
  try {
    await gh.request(blocks ? { blockUser: { userId: user } } : { unblockUser: { userId: user } });
    if (blocks) state.blocked.add(user); else state.blocked.delete(user);
    renderConversations();
  } catch (err) { showError("view-error", err); }
}

// ---- invite links ----

/** The join screen of an invite link: what it leads to, and Join. */
async function showInvite(code) {
  history.replaceState(null, "", "/" + location.search);
  $("invite-screen").hidden = false;
  $("invite-join").hidden = true;
  showError("invite-error", null);
  try {
    const c = (await gh.request({ lookUpInvite: { code } })).inviteCode;
    $("invite-icon").textContent = c.serverIcon || (c.serverName || "?").slice(0, 1).toUpperCase();
    $("invite-server").textContent = c.serverName;
    const n = Number(c.memberCount || 0);
    $("invite-details").textContent = `${n} member${n === 1 ? "" : "s"} · lands in # ${c.channelName}`;
    $("invite-join").hidden = false;
    $("invite-join").onclick = async () => {
      try {
        const landed = (await gh.request({ joinByInvite: { code } })).inviteCode;
        $("invite-screen").hidden = true;
        state.currentServer = landed.serverId;
        await loadServers();
        await loadMembers(landed.serverId);
        await openView({ kind: "channel", serverId: landed.serverId, channelId: landed.channelId });
      } catch (err) { showError("invite-error", err); }
    };
  } catch (err) {
    $("invite-server").textContent = "";
    $("invite-details").textContent = "";
    showError("invite-error", err.code === "NOT_FOUND" ? { code: "invalid", message: "this invite is invalid or has expired" } : err);
  }
}

async function makeInvite() {
  try {
    const c = (await gh.request({ createInviteCode: { serverId: state.currentServer } })).inviteCode;
    $("invite-link").value = `${location.origin}/invite/${c.code}`;
    $("invite-made").hidden = false;
    $("invite-link").select();
  } catch (err) { showError("view-error", err); }
}

// ---- the member list ----

/** The first page of a server's member list, watched; the last server's watch ends. */
async function loadMembers(serverId) {
  const old = state.members?.serverId;
  if (old && old !== serverId) gh.request({ listMembers: { serverId: old, stopWatching: true } }).catch(() => {});
  if (!serverId) { state.members = null; renderMembers(); return; }
  try {
    const r = await gh.request({ listMembers: { serverId, limit: 100, watch: true } });
    if (state.currentServer !== serverId) return;
    const page = r.members;
    state.members = { serverId, list: page.members || [], next: page.nextCursor || "", memberCount: page.memberCount || 0, onlineCount: page.onlineCount || 0 };
    learnNames(state.members.list);
    $("nickname-input").value = state.members.list.find((x) => x.userId === state.me)?.nickname || "";
  } catch {
    state.members = null;
  }
  renderMembers();
}

async function moreMembers() {
  const m = state.members;
  if (!m?.next) return;
  const r = await gh.request({ listMembers: { serverId: m.serverId, cursor: m.next, limit: 100 } });
  if (state.members !== m) return;
  m.list = [...m.list, ...(r.members.members || []).filter((x) => !m.list.some((y) => y.userId === x.userId))];
  learnNames(m.list);
  m.next = r.members.nextCursor || "";
  renderMembers();
}

function renderMembers() {
  const m = state.members;
  $("members").hidden = !m;
  if (!m) { $("audit-open").hidden = true; return; }
  // The list's count is the freshest: the header follows it.
  const s = state.servers.get(m.serverId);
  if (s && String(s.info.memberCount) !== String(m.memberCount)) {
    s.info.memberCount = m.memberCount;
    renderChannels();
  }
  $("member-counts").textContent = `${m.onlineCount} online · ${m.memberCount} member${Number(m.memberCount) === 1 ? "" : "s"}`;
  $("members-more").hidden = !m.next;
  const moderator = m.list.some((x) => x.userId === state.me && (x.role === "OWNER" || x.role === "ADMIN"));
  $("moderation-reason").hidden = !moderator;
  $("audit-open").hidden = !moderator;
  $("member-list").replaceChildren(...m.list.map((x) => {
    const status = x.presence?.status || "PRESENCE_OFFLINE";
    const label = { PRESENCE_ONLINE: "online", PRESENCE_IDLE: "idle", PRESENCE_DO_NOT_DISTURB: "do not disturb" }[status] || "offline";
    const other = x.userId !== state.me && x.role !== "OWNER";
    return el("li", { class: `member ${status === "PRESENCE_OFFLINE" ? "offline" : ""}`, dataset: { user: x.userId, status } },
      el("span", { class: `presence ${status}`, role: "img", "aria-label": label, title: label }),
      x.avatar ? el("img", { class: "avatar", src: x.avatar, alt: "" }) : null,
      el("span", { class: "name", title: x.userId }, x.nickname || x.displayName || x.userId),
      Number(x.timeoutUntil || 0) > Date.now() ? el("span", { class: "timed-out", title: `timed out until ${new Date(Number(x.timeoutUntil)).toLocaleString()}` }, "⏳") : null,
      x.presence?.customText ? el("span", { class: "status-text" }, x.presence.customText) : null,
      moderator && other ? el("span", { class: "moderate" },
        el("button", { type: "button", class: "timeout-action", title: `time ${x.userId} out for 10 minutes`, onclick: () => moderate("timeoutMember", x.userId, { until: String(Date.now() + 600_000) }) }, "Time out"),
        el("button", { type: "button", class: "kick-action", title: `remove ${x.userId}`, onclick: () => moderate("kickMember", x.userId) }, "Kick"),
        el("button", { type: "button", class: "ban-action", title: `ban ${x.userId}`, onclick: () => moderate("banMember", x.userId) }, "Ban")) : null);
  }));
}

/// A moderation request on a member of the shown server, with the reason typed above the list.
async function moderate(kind, userId, extra = {}) {
  const m = state.members;
  if (!m) return;
  const verb = { timeoutMember: "time out", kickMember: "remove", banMember: "ban" }[kind];
  if (kind !== "timeoutMember" && !confirm(`${verb} ${nameOf(userId)}?`)) return;
  try {
    await gh.request({ [kind]: { serverId: m.serverId, userId, reason: $("moderation-reason").value.trim(), ...extra } });
    $("moderation-reason").value = "";
    await loadMembers(m.serverId);
    if (!$("audit").hidden) showAudit();
  } catch (err) { showError("view-error", err); }
}

// ---- the audit log ----

const AUDIT_WORDS = {
  AUDIT_SERVER_UPDATED: "changed the server", AUDIT_OWNERSHIP_TRANSFERRED: "handed the server to", AUDIT_CHANNEL_CREATED: "made channel",
  AUDIT_CHANNEL_UPDATED: "changed channel", AUDIT_CHANNEL_DELETED: "deleted channel", AUDIT_MEMBER_INVITED: "invited",
  AUDIT_MEMBER_KICKED: "removed", AUDIT_MEMBER_BANNED: "banned", AUDIT_MEMBER_UNBANNED: "unbanned", AUDIT_MEMBER_TIMED_OUT: "timed out",
  AUDIT_MEMBER_ROLES_CHANGED: "changed the roles of", AUDIT_ROLE_CREATED: "made role", AUDIT_ROLE_UPDATED: "changed role",
  AUDIT_ROLE_DELETED: "deleted role", AUDIT_OVERRIDE_CHANGED: "set an override for", AUDIT_MESSAGE_RECALLED: "recalled a message of",
  AUDIT_MESSAGE_DELETED: "deleted a message", AUDIT_MESSAGE_PINNED: "pinned a message", AUDIT_MESSAGE_UNPINNED: "unpinned a message",
  AUDIT_INVITE_CREATED: "made invite", AUDIT_INVITE_REVOKED: "revoked invite", AUDIT_MEMBER_NICKNAME_CHANGED: "renamed",
};

/// What an entry was made to, as the page knows it: a member's name, a channel's, or the id.
function auditTarget(e) {
  if (!e.target) return "";
  if (!/^\d+$/.test(e.target)) return e.action.startsWith("AUDIT_INVITE") ? e.target : nameOf(e.target);
  const channel = state.servers.get(state.currentServer)?.channels.get(e.target);
  return channel ? `#${channel.name}` : e.target;
}

async function showAudit() {
  const serverId = state.currentServer;
  if (!serverId) return;
  try {
    const log = (await gh.request({ getAuditLog: { serverId, limit: 50 } })).auditLog;
    $("audit-list").replaceChildren(...(log.entries || []).map((e) => el("li", { class: "audit-entry", dataset: { action: e.action } },
      el("span", { class: "time" }, new Date(Number(e.time)).toLocaleString()), " ",
      el("strong", {}, e.actor ? nameOf(e.actor) : "Guildhall"), ` ${AUDIT_WORDS[e.action] || e.action} `,
      el("span", { class: "target" }, auditTarget(e)),
      e.reason ? el("span", { class: "reason" }, ` — ${e.reason}`) : null)));
    if (!(log.entries || []).length) $("audit-list").replaceChildren(el("li", { class: "muted" }, "nothing yet"));
    $("audit").hidden = false;
  } catch (err) { showError("view-error", err); }
}

// ---- a view: one channel or one conversation ----

function targetOf(view) { return [{ serverId: view.serverId, channelId: view.channelId }]; }

/** Opens a view at one of its messages (a search hit): the stretch around it, the message marked. */
async function jumpTo(view, m) {
  const open = state.view?.kind === view.kind && state.view.channelId === view.channelId;
  if (!open || !state.messages.some((x) => x.uid === m.uid)) {
    await openView(view, false, m.seq);
  }
  state.focus = m.uid;
  renderMessages();
  document.querySelector(`#messages .message[data-uid="${m.uid}"]`)?.scrollIntoView({ block: "center" });
}

/** `at`: a seq to open at (else the newest). */
async function openView(view, again = false, at = null) {
  const old = state.view;
  if (!again && old?.kind === "channel" && !(view.kind === "channel" && view.channelId === old.channelId)) {
    for (const type of ["CHANNEL_MSG", "CHANNEL_TYPING"]) {
      gh.request({ subscribe: { type, operation: "UNSUBSCRIBE", targets: targetOf(old) } }).catch(() => {});
    }
  }
  state.view = view;
  state.messages = [];
  state.moreBelow = false;
  state.focus = null;
  state.replyTo = null;
  if (!state.sending) { state.pending = []; renderPending(); }
  $("replying").hidden = true;
  $("readers").hidden = true;
  showError("view-error", null);
  if (view.kind === "channel") {
    refreshServer(view.serverId);
    const ch = state.servers.get(view.serverId)?.channels.get(view.channelId);
    $("view-title").textContent = `# ${ch?.name || view.channelId}`;
    const slow = Number(ch?.slowModeSeconds || 0);
    $("slow-mode").textContent = slow ? `Slow mode: one message every ${slow} s` : "";
    $("need-receipt").parentElement.hidden = false;
    for (const type of ["CHANNEL_MSG", "CHANNEL_TYPING"]) {
      await gh.request({ subscribe: { type, operation: "SUBSCRIBE", targets: targetOf(view) } });
    }
  } else {
    $("view-title").textContent = conversationName(state.conversations.get(view.conversationId) || { peerId: view.peerId });
    $("need-receipt").parentElement.hidden = true;
  }
  $("composer").hidden = false;
  $("pins-open").hidden = view.kind !== "channel";
  $("webhooks-open").hidden = view.kind !== "channel";
  $("webhooks").hidden = true;
  // Blocks are between two people: a group has none.
  $("block-peer").hidden = view.kind !== "dm" || !view.peerId;
  $("block-peer").textContent = view.kind === "dm" && state.blocked.has(view.peerId) ? "Unblock" : "Block";
  $("pins").hidden = true;
  if (view.kind !== "channel") $("slow-mode").textContent = "";
  renderServers();
  renderChannels();
  renderConversations();
  if (at !== null) {
    // The message and what came before it, then what came after.
    state.messages = [];
    await loadAbove(BigInt(at) + 1n);
    await loadBelow();
    return;
  }
  await loadAbove();
  scrollToBottom();
  seen();
}

/** The next page below the stretch shown (after a jump), until it reaches the newest. */
async function loadBelow() {
  if (state.loadingAbove || !state.view || !state.moreBelow && state.messages.length) return;
  const view = state.view, newest = state.messages[state.messages.length - 1];
  state.loadingAbove = true;
  try {
    const r = await gh.request({ getHistory: { channelId: viewChannelId(), seq: newest ? newest.seq : "0", direction: "AFTER", limit: PAGE } });
    if (view !== state.view) return;
    const page = (r.messages.messages || []).filter((m) => !state.messages.some((x) => x.uid === m.uid));
    state.messages = [...state.messages, ...page];
    state.moreBelow = !!r.messages.moreAvailable;
    renderMessages();
  } catch (err) {
    showError("view-error", err);
  } finally {
    state.loadingAbove = false;
  }
}

/** The server's info now (its member count moves as people join). */
function refreshServer(serverId) {
  gh.request({ getServers: { serverIds: [serverId] } }).then((r) => {
    const info = (r.servers.servers || [])[0], s = state.servers.get(serverId);
    if (info && s) s.info = info;
    renderServers();
    renderChannels();
  }).catch(() => {});
}

function viewChannelId() { return state.view?.kind === "channel" ? state.view.channelId : state.view?.conversationId; }

/** `from`: the seq to page back from when nothing is shown yet (a jump's), else the oldest shown, or the newest. */
async function loadAbove(from = null) {
  if (state.loadingAbove || !state.view) return;
  state.loadingAbove = true;
  const view = state.view;
  try {
    const oldest = state.messages[0];
    const anchor = oldest ? oldest.seq : from !== null ? String(from) : "0";
    if (from !== null) state.moreBelow = true;
    const r = await gh.request({ getHistory: { channelId: viewChannelId(), seq: anchor, direction: "BEFORE", limit: PAGE } });
    if (view !== state.view) return;
    const page = (r.messages.messages || []).filter((m) => !state.messages.some((x) => x.uid === m.uid));
    state.messages = [...page, ...state.messages].sort((a, b) => Number(BigInt(a.seq || 0) - BigInt(b.seq || 0)));
    state.moreAbove = !!r.messages.moreAvailable;
    const box = $("messages"), before = box.scrollHeight - box.scrollTop;
    renderMessages();
    box.scrollTop = box.scrollHeight - before;
    if (view.kind === "channel") refreshReceipts(page.filter((m) => m.senderId === state.me && (m.needReceipt || m.receipt?.requested)).map((m) => m.uid));
  } catch (err) {
    showError("view-error", err);
  } finally {
    state.loadingAbove = false;
  }
}

function atBottom() {
  const box = $("messages");
  return box.scrollHeight - box.scrollTop - box.clientHeight < 40;
}

function scrollToBottom() { const box = $("messages"); box.scrollTop = box.scrollHeight; }

/** The view is at its newest message: mark it read, answer receipt requests, send a read receipt. */
async function seen() {
  const view = state.view;
  if (!view || !atBottom() || document.visibilityState === "hidden") return;
  const newest = state.messages[state.messages.length - 1];
  if (view.kind === "channel") {
    const u = state.unread.get(view.channelId);
    if (newest && (!u || Number(u.unreadCount || 0) > 0 || BigInt(u.readSeq || 0) < BigInt(newest.seq || 0))) {
      gh.request({ markRead: { channelId: view.channelId, seq: newest.seq } }).then((r) => {
        if (r.unread) state.unread.set(r.unread.channelId || view.channelId, r.unread);
        renderServers();
        renderChannels();
      }).catch(() => {});
    }
    const asked = state.messages.filter((m) => m.senderId !== state.me && !m.removal && (m.needReceipt || m.receipt?.requested) && !m.receipt?.responded);
    if (asked.length) {
      gh.request({ respondReceipts: { channelId: view.channelId, messageUids: asked.slice(-100).map((m) => m.uid) } }).then((r) => {
        for (const info of r.receipts.receipts || []) updateMessage(info.messageUid, (m) => { m.receipt = { ...(m.receipt || {}), ...info }; });
      }).catch(() => {});
      for (const m of asked) m.receipt = { ...(m.receipt || {}), responded: true };
    }
  } else {
    const c = state.conversations.get(view.conversationId);
    const last = [...state.messages].reverse().find((m) => m.senderId !== state.me);
    if (last && (Number(c?.unreadCount || 0) > 0 || BigInt(c?.readTime || 0) < BigInt(last.sentTime || 0))) {
      gh.request({ sendReadReceipt: { conversationId: view.conversationId, time: last.sentTime } }).then((r) => {
        if (r.conversation) state.conversations.set(view.conversationId, { ...c, ...r.conversation, unreadCount: "0" });
        renderConversations();
      }).catch(() => {});
    }
  }
}

function updateMessage(uid, change) {
  const m = state.messages.find((x) => x.uid === uid);
  if (!m) return false;
  change(m);
  renderMessages();
  return true;
}

function addMessage(m) {
  if (state.messages.some((x) => x.uid === m.uid)) return updateMessage(m.uid, (x) => Object.assign(x, m));
  // An older stretch is shown: the newest come when the view reaches them (or jumps to the present).
  if (state.moreBelow) { if (m.senderId === state.me) openView(state.view); return; }
  const bottom = atBottom();
  state.messages.push(m);
  state.messages.sort((a, b) => Number(BigInt(a.seq || 0) - BigInt(b.seq || 0)));
  renderMessages();
  if (bottom || m.senderId === state.me) scrollToBottom();
  seen();
}

// ---- messages ----

function receiptLine(m) {
  const r = m.receipt;
  if (m.senderId !== state.me || !(m.needReceipt || r?.requested) || r?.countHidden) return null;
  const others = Math.max(0, Number(r?.memberCount || 0) - 1);
  return el("span", { class: "receipt", title: "who read it", onclick: () => showReaders(m.uid) },
    `read by ${Number(r?.readerCount || 0)} of ${others}`);
}

function ticks(m) {
  if (state.view?.kind !== "dm" || m.senderId !== state.me) return null;
  const status = m.sentStatus || "SENT";
  const mark = { SENDING: "…", SENT: "✓", DELIVERED: "✓✓", READ: "✓✓" }[status] || "✓";
  // In a group: how many of the others read it.
  const of = Number(m.recipientCount || 0);
  const text = of > 1 && status !== "SENDING" ? `${mark} read by ${Number(m.readCount || 0)} of ${of}` : `${mark} ${status.toLowerCase()}`;
  return el("span", { class: "ticks", dataset: { status }, title: status.toLowerCase() }, text);
}

/** "1.2 MB" for a byte count. */
function sizeText(bytes) {
  const n = Number(bytes || 0);
  if (n < 1024) return `${n} B`;
  const units = ["KB", "MB", "GB"];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** A message's files: images, audio and video shown, other files as links to save. */
function attachmentsOf(m) {
  const files = m.attachments || [];
  if (!files.length) return null;
  return el("div", { class: "attachments" }, files.map((a) => {
    const type = a.contentType || "";
    const shownImage = type.startsWith("image/") && type !== "image/svg+xml";
    if (shownImage) {
      // Scaled to at most 320 × 240, its place kept before it loads (no jump in the list).
      const w = Number(a.width || 0), h = Number(a.height || 0), k = w && h ? Math.min(1, 320 / w, 240 / h) : 1;
      return el("a", { class: "image", href: a.url, target: "_blank", rel: "noopener", title: `${a.filename} · ${sizeText(a.size)}` },
        el("img", { src: a.url, alt: a.filename, loading: "lazy", width: w ? Math.round(w * k) : null, height: h ? Math.round(h * k) : null }));
    }
    if (type.startsWith("audio/")) return el("audio", { controls: true, preload: "none", src: a.url, title: a.filename });
    if (type.startsWith("video/")) return el("video", { controls: true, preload: "metadata", src: a.url, title: a.filename });
    return el("a", { class: "file", href: a.url, download: a.filename }, "📄 ", el("span", { class: "filename" }, a.filename), ` ${sizeText(a.size)}`);
  }));
}

function renderMessage(m) {
  const removed = m.removal && m.removal.kind;
  const text = removed ? (m.removal.kind === "RECALLED" ? "message recalled" : "message deleted")
    : (m.body?.text ?? (m.body?.custom ? `[${m.body.custom.type}]` : ""));
  const own = m.senderId === state.me;
  const actions = removed ? [] : [
    el("button", { type: "button", class: "reply-action", onclick: () => startReply(m) }, "Reply"),
    ...Object.entries(REACTIONS).slice(0, 2).map(([type, emoji]) => el("button", { type: "button", class: `react-${type}`, onclick: () => react(m, Number(type)) }, emoji)),
    own ? el("button", { type: "button", class: "edit-action", onclick: () => edit(m) }, "Edit") : null,
    own ? el("button", { type: "button", class: "recall-action", onclick: () => operate("recallMessage", m) }, "Recall") : null,
    el("button", { type: "button", class: "delete-action", onclick: () => operate("deleteMessage", m) }, "Delete"),
    own && state.view?.kind === "channel" && !(m.needReceipt || m.receipt?.requested)
      ? el("button", { type: "button", class: "receipt-action", onclick: () => askReceipts(m) }, "Ask receipts") : null,
    state.view?.kind === "channel" ? el("button", { type: "button", class: "pin-action", onclick: () => operate("pinMessage", m).then(showPins) }, "Pin") : null,
  ];
  return el("div", { class: `message${removed ? " removed" : ""}${own ? " own" : ""}`, dataset: { uid: m.uid, seq: m.seq || "" } },
    m.replyTo?.messageUid ? el("div", { class: "reply" }, `↪ ${m.replyTo.senderId}: ${m.replyTo.excerpt || ""}`) : null,
    m.webhook?.webhookId
      ? el("span", { class: "sender webhook", title: `webhook ${m.webhook.webhookId}` }, m.webhook.name, el("span", { class: "tag" }, "webhook"))
      : el("span", { class: "sender", title: m.senderId }, nameOf(m.senderId)),
    el("span", { class: "text" }, text),
    m.editedTime && !removed ? el("span", { class: "edited" }, "(edited)") : null,
    removed ? null : attachmentsOf(m),
    " ",
    el("span", { class: "time" }, new Date(Number(m.sentTime || 0)).toLocaleTimeString()),
    receiptLine(m),
    ticks(m),
    (m.reactions || []).length ? el("div", { class: "reactions" }, m.reactions.map((r) =>
      el("button", { type: "button", class: r.mine ? "mine" : "", onclick: () => react(m, r.type) }, `${REACTIONS[r.type] || `#${r.type}`} ${r.count}`))) : null,
    el("div", { class: "actions" }, actions));
}

function renderMessages() {
  const box = $("messages");
  const items = state.messages.map(renderMessage);
  if (state.moreAbove) items.unshift(el("div", { class: "more" }, "scroll up for older messages"));
  if (state.moreBelow) items.push(el("div", { class: "more" }, "scroll down for newer messages"));
  box.replaceChildren(...items);
  if (state.focus) box.querySelector(`.message[data-uid="${state.focus}"]`)?.classList.add("focus");
  $("jump-present").hidden = !state.moreBelow;
}

function startReply(m) {
  state.replyTo = m;
  $("replying").hidden = false;
  $("replying").querySelector("span").textContent = `replying to ${m.senderId}: ${(m.body?.text || "").slice(0, 60)}`;
  $("text").focus();
}

async function react(m, type) {
  const mine = (m.reactions || []).some((r) => r.type === type && r.mine);
  try {
    const r = await gh.request({ [mine ? "removeReaction" : "addReaction"]: { channelId: viewChannelId(), messageUid: m.uid, type } });
    if (r.message) addMessage(r.message);
  } catch (err) { showError("view-error", err); }
}

async function edit(m) {
  const text = prompt("Edit message", m.body?.text || "");
  if (text === null || !text.trim()) return;
  try {
    const r = await gh.request({ editMessage: { channelId: viewChannelId(), messageUid: m.uid, body: { text } } });
    if (r.message) addMessage(r.message);
  } catch (err) { showError("view-error", err); }
}

async function operate(kind, m) {
  try {
    const r = await gh.request({ [kind]: { channelId: viewChannelId(), messageUid: m.uid } });
    if (r.message) addMessage(r.message);
  } catch (err) { showError("view-error", err); }
}

/** Receipt info of messages as the server has it now (reader count, and N: the members now). */
async function refreshReceipts(uids) {
  for (let i = 0; i < uids.length; i += 100) {
    try {
      const r = await gh.request({ getReceiptInfo: { messageUids: uids.slice(i, i + 100) } });
      for (const info of r.receipts.receipts || []) updateMessage(info.messageUid, (m) => { m.receipt = info; });
    } catch (err) { showError("view-error", err); }
  }
}

async function askReceipts(m) {
  try {
    const r = await gh.request({ requestReceipt: { messageUid: m.uid } });
    for (const info of r.receipts.receipts || []) updateMessage(info.messageUid, (x) => { x.receipt = info; });
  } catch (err) { showError("view-error", err); }
}

async function showReaders(uid) {
  try {
    const r = await gh.request({ getReceiptReaders: { messageUid: uid, limit: 100 } });
    $("reader-list").replaceChildren(...(r.readers.readers || []).map((x) =>
      el("li", { class: "reader" }, `${x.userId} · ${new Date(Number(x.readTime || 0)).toLocaleTimeString()}`)));
    $("readers").hidden = false;
  } catch (err) { showError("view-error", err); }
}

// ---- server events ----

function setUnread(info) {
  if (!info || !info.channelId) return;
  state.unread.set(info.channelId, info);
  renderServers();
  renderChannels();
}

const handlers = {
  message(m, e) {
    const isDirect = !m.serverId || m.serverId === "0";
    notifyHidden(m, isDirect);
    if (isDirect) {
      const peer = m.senderId === state.me ? m.recipientId : m.senderId;
      // A group's first message here: its name and members come with the list.
      if (!state.conversations.has(m.channelId) && !m.recipientId) loadConversations().catch(() => {});
      const c = state.conversations.get(m.channelId) || { conversationId: m.channelId, peerId: m.recipientId ? peer : "", unreadCount: "0" };
      const open = state.view?.kind === "dm" && state.view.conversationId === m.channelId;
      if (!open && m.senderId !== state.me) c.unreadCount = String(Number(c.unreadCount || 0) + 1);
      state.conversations.set(m.channelId, c);
      renderConversations();
      if (open) addMessage(m);
      return;
    }
    if (e.unread) setUnread({ ...e.unread, channelId: e.unread.channelId || m.channelId });
    if (state.view?.kind === "channel" && state.view.channelId === m.channelId) {
      state.typers.set(m.channelId, (state.typers.get(m.channelId) || []).filter((t) => t.userId !== m.senderId));
      renderTyping();
      addMessage(m);
    }
  },
  unreadChanged(u) { setUnread(u); },
  presence(event) {
    const m = state.members;
    if (!m) return;
    for (const p of event.presences || []) {
      const x = m.list.find((y) => y.userId === p.userId);
      if (x) x.presence = p;
    }
    renderMembers();
  },
  memberList(u) {
    const m = state.members;
    if (!m || m.serverId !== u.serverId) return;
    m.memberCount = u.memberCount || 0;
    m.onlineCount = u.onlineCount || 0;
    const i = m.list.findIndex((y) => y.userId === u.member.userId);
    if (!u.inWindow) {
      if (i >= 0) m.list.splice(i, 1);
    } else if (i >= 0) {
      m.list[i] = u.member;
      learnNames([u.member]);
    } else {
      // A newcomer inside the window: its place is the server's to say.
      loadMembers(m.serverId);
      return;
    }
    renderMembers();
  },
  typing(t) {
    const until = Date.now() + 8000;
    // One frame carries every channel whose typers changed; older servers sent one channel.
    for (const c of t.channels?.length ? t.channels : [t]) {
      state.typers.set(c.channelId, (c.typers || []).filter((x) => x.userId !== state.me).map((x) => ({ userId: x.userId, until })));
    }
    renderTyping();
  },
  receiptRequest(r) {
    updateMessage(r.messageUid, (m) => { m.receipt = { ...(m.receipt || {}), requested: true }; });
    seen();
  },
  receiptResponse(list) {
    for (const r of list.responses || []) {
      updateMessage(r.messageUid, (m) => { m.receipt = { ...(m.receipt || {}), requested: true, readerCount: r.readerCount }; });
    }
    refreshReceipts((list.responses || []).map((r) => r.messageUid));
  },
  directReceipt(d) {
    // In a group one member's receipt moves a count, not the status: ask for the messages as they are now.
    if (state.conversations.get(d.conversationId)?.isGroup) {
      const mine = state.messages.filter((m) => m.senderId === state.me && m.channelId === d.conversationId).slice(-100).map((m) => m.uid);
      if (mine.length) {
        gh.request({ getMessages: { uids: mine } }).then((r) => {
          for (const x of r.messages.messages || []) updateMessage(x.uid, (m) => Object.assign(m, x));
        }).catch(() => {});
      }
      return;
    }
    const rank = { SENT: 2, DELIVERED: 3, READ: 4 };
    const uids = new Set(d.messageUids || []);
    let changed = false;
    for (const m of state.messages) {
      if (m.senderId !== state.me || m.channelId !== d.conversationId) continue;
      const covered = uids.size ? uids.has(m.uid) : BigInt(m.sentTime || 0) <= BigInt(d.readTime || 0);
      if (covered && (rank[d.status] || 0) > (rank[m.sentStatus] || 2)) { m.sentStatus = d.status; changed = true; }
    }
    if (changed) renderMessages();
  },
  messageUpdate(u) { if (u.message) updateMessage(u.message.uid, (m) => { Object.keys(m).forEach((k) => delete m[k]); Object.assign(m, u.message); }); },
  notification(n) {
    if (n.kind === "CONVERSATION_UPDATED" && n.conversation) {
      const c = n.conversation, id = c.conversationId;
      if ((c.memberIds || []).includes(state.me)) {
        state.conversations.set(id, { ...(state.conversations.get(id) || {}), ...c });
        if (state.view?.kind === "dm" && state.view.conversationId === id) $("view-title").textContent = conversationName(c);
      } else {
        // Removed, or gone: it is no longer ours.
        state.conversations.delete(id);
        if (state.view?.kind === "dm" && state.view.conversationId === id) closeView();
      }
      renderConversations();
    }
    if (n.kind === "USER_UPDATED" && n.user) {
      if (n.user.displayName) state.names.set(n.user.userId, n.user.displayName); else state.names.delete(n.user.userId);
      if (n.user.userId === state.me) $("profile-name").value = n.user.displayName || "";
      renderMessages();
    }
    if (["CHANNEL_CREATED", "CHANNEL_UPDATED", "CHANNEL_DELETED", "SERVER_UPDATED", "SERVER_DELETED", "MEMBER_KICKED", "MEMBER_BANNED"].includes(n.kind)) {
      loadServers().catch(() => {});
    }
  },
};

function renderTyping() {
  const id = viewChannelId() || null;
  const now = Date.now();
  const names = (state.typers.get(id) || []).filter((t) => t.until > now).map((t) => t.userId);
  $("typing").textContent = names.length === 0 ? "" : names.length === 1 ? `${names[0]} is typing…` : `${names.join(", ")} are typing…`;
}
setInterval(renderTyping, 1000);

// ---- the page's forms ----

// ---- files waiting to be sent ----

function addFiles(files) {
  if (!state.view) return;
  for (const file of files) state.pending.push({ file, progress: 0 });
  renderPending();
}

function renderPending() {
  $("pending-files").replaceChildren(...state.pending.map((p, i) =>
    el("li", { class: "pending" },
      el("span", { class: "filename" }, p.file.name), ` ${sizeText(p.file.size)}`,
      p.progress > 0 ? el("progress", { max: 1, value: p.progress }) : null,
      state.sending ? null : el("button", { type: "button", title: `remove ${p.file.name}`, "aria-label": `remove ${p.file.name}`,
                                            onclick: () => { state.pending.splice(i, 1); renderPending(); } }, "×"))));
  $("pending-files").hidden = state.pending.length === 0;
}

/** Uploads one file for the view (asks for an upload, then PUTs the bytes with progress); its file id. */
async function upload(p, view) {
  const where = view === "avatar" ? { avatar: true } : view.kind === "channel" ? { channelId: view.channelId } : { conversationId: view.conversationId };
  const r = await gh.request({ createUpload: { ...where, filename: p.file.name, contentType: p.file.type || "", size: String(p.file.size) } });
  await new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", r.upload.url);
    // The browser sets the length itself.
    for (const h of r.upload.headers || []) if (h.name.toLowerCase() !== "content-length") xhr.setRequestHeader(h.name, h.value);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) { p.progress = e.loaded / e.total; renderPending(); } };
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject({ code: xhr.status, message: `${p.file.name}: ${xhr.responseText || "upload refused"}` }));
    xhr.onerror = () => reject({ code: "upload", message: `${p.file.name} could not be uploaded` });
    xhr.send(p.file);
  });
  return r.upload.fileId;
}

async function send(text) {
  const view = state.view;
  const clientId = crypto.randomUUID();
  const replyTo = state.replyTo?.uid;
  state.replyTo = null;
  $("replying").hidden = true;
  state.sending = true;
  try {
    const attachments = [];
    for (const p of state.pending) attachments.push(await upload(p, view));
    state.pending = [];
    if (view.kind === "channel") {
      // "@bob" in the text mentions bob; "@everyone" mentions all (for those allowed to).
      const names = [...text.matchAll(/(?:^|\s)@([^\s@]+)/g)].map((m) => m[1]);
      const mentionAll = names.includes("everyone");
      const mentions = [...new Set(names.filter((n) => n !== "everyone"))];
      const r = await gh.request({ sendMessage: { channelId: view.channelId, body: { text }, clientId, mentions, mentionAll,
                                                  needReceipt: $("need-receipt").checked, replyTo, attachments } });
      addMessage(r.message);
      if (r.message.needReceipt) refreshReceipts([r.message.uid]);
    } else {
      const r = await gh.request({ sendDirectMessage: { conversationId: view.conversationId, body: { text }, clientId, replyTo, attachments } });
      addMessage(r.message);
    }
  } catch (err) {
    showError("view-error", err);
  } finally {
    state.sending = false;
    renderPending();
  }
}

/** The open channel's webhooks (for those who may manage them), and making one. */
async function showWebhooks() {
  if (state.view?.kind !== "channel") return;
  const channelId = state.view.channelId;
  $("webhooks").hidden = false;
  try {
    const r = await gh.request({ listWebhooks: { channelId } });
    if (state.view?.channelId !== channelId) return;
    const hooks = r.webhooks.webhooks || [];
    $("webhook-list").replaceChildren(...(hooks.length ? hooks.map((w) => el("li", { class: "webhook", dataset: { id: w.webhookId } },
      el("span", { class: "name" }, w.name), " ",
      el("button", { type: "button", class: "webhook-delete", "aria-label": `delete webhook ${w.name}`, onclick: async () => {
        if (!confirm(`Delete the webhook ${w.name}? Its URL stops working.`)) return;
        try { await gh.request({ deleteWebhook: { channelId, webhookId: w.webhookId } }); } catch (err) { showError("view-error", err); }
        showWebhooks();
      } }, "Delete"))) : [el("li", { class: "muted" }, "no webhooks")]));
  } catch (err) {
    $("webhook-list").replaceChildren(el("li", { class: "error" }, `${err.code || "error"}: ${err.message || err}`));
  }
}

// ---- search in a server ----

/** The open channel's pins, in the side panel. */
async function showPins() {
  if (state.view?.kind !== "channel") return;
  const channelId = state.view.channelId;
  $("pins").hidden = false;
  try {
    const r = await gh.request({ listPins: { channelId } });
    if (state.view?.channelId !== channelId) return;
    const pins = r.pins.pins || [];
    $("pin-list").replaceChildren(...(pins.length ? pins.map((p) => el("li", { class: "pin", dataset: { uid: p.message.uid } },
      el("div", { class: "where muted" }, `${p.message.senderId} · pinned by ${p.pinnedBy}`),
      el("div", {}, p.message.body?.text ?? ""),
      el("button", { type: "button", class: "unpin-action", onclick: () => operate("unpinMessage", p.message).then(showPins) }, "Unpin"))) : [el("li", { class: "muted" }, "no pins")]));
  } catch (err) {
    $("pin-list").replaceChildren(el("li", { class: "error" }, `${err.code || "error"}: ${err.message || err}`));
  }
}

async function search(words) {
  const serverId = state.currentServer;
  if (!serverId || !words.trim()) return;
  const box = $("search-results");
  box.hidden = false;
  $("search-title").textContent = `Search: ${words}`;
  try {
    const r = await gh.request({ searchMessages: { serverId, query: words, limit: 25 } });
    const hits = r.searchResults.hits || [];
    $("search-list").replaceChildren(...(hits.length ? hits.map((h) => {
      const m = h.message, channel = state.servers.get(m.serverId)?.channels.get(m.channelId);
      const go = () => jumpTo({ kind: "channel", serverId: m.serverId, channelId: m.channelId }, m);
      return el("li", { class: "hit", dataset: { uid: m.uid, channel: m.channelId }, tabindex: 0, role: "link",
                        onclick: go, onkeydown: (e) => { if (e.key === "Enter") go(); } },
        el("div", { class: "where muted" }, `# ${channel?.name || m.channelId} · ${m.senderId} · ${new Date(Number(m.sentTime || 0)).toLocaleString()}`),
        el("div", { class: "snippet" }, (h.snippet || []).map((part) => (part.match ? el("mark", {}, part.text) : part.text))),
        (m.attachments || []).length ? el("div", { class: "muted" }, m.attachments.map((a) => `📄 ${a.filename}`).join(" ")) : null);
    }) : [el("li", { class: "muted" }, "nothing found")]));
  } catch (err) {
    $("search-list").replaceChildren(el("li", { class: "error" }, `${err.code || "error"}: ${err.message || err}`));
  }
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
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("text").value;
    if ((!text.trim() && !state.pending.length) || !state.view || state.sending) return;
    $("text").value = "";
    send(text);
  });
  $("file-input").addEventListener("change", (e) => { addFiles([...e.target.files]); e.target.value = ""; });
  // Files dropped on the view, or pasted into the message, wait to be sent with it.
  const view = $("view");
  view.addEventListener("dragover", (e) => { if (state.view && e.dataTransfer?.types.includes("Files")) { e.preventDefault(); view.classList.add("dropping"); } });
  view.addEventListener("dragleave", () => view.classList.remove("dropping"));
  view.addEventListener("drop", (e) => {
    view.classList.remove("dropping");
    if (!state.view || !e.dataTransfer?.files.length) return;
    e.preventDefault();
    addFiles([...e.dataTransfer.files]);
  });
  $("text").addEventListener("paste", (e) => {
    const files = [...(e.clipboardData?.files || [])];
    if (files.length) { e.preventDefault(); addFiles(files); }
  });
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    search($("search-input").value);
  });
  $("search-close").addEventListener("click", () => { $("search-results").hidden = true; });
  $("pins-open").addEventListener("click", () => showPins());
  $("webhooks-open").addEventListener("click", () => { $("webhook-made").hidden = true; showWebhooks(); });
  $("webhooks-close").addEventListener("click", () => { $("webhooks").hidden = true; });
  $("webhook-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const channelId = state.view?.channelId;
    if (!channelId) return;
    try {
      const r = await gh.request({ createWebhook: { channelId, name: $("webhook-name").value.trim() } });
      $("webhook-name").value = "";
      // The listener that served this page serves webhooks too.
      $("webhook-url").value = location.origin + r.webhook.path;
      $("webhook-made").hidden = false;
      showWebhooks();
    } catch (err) { showError("view-error", err); }
  });
  $("audit-open").addEventListener("click", () => showAudit());
  $("audit-close").addEventListener("click", () => { $("audit").hidden = true; });
  $("block-peer").addEventListener("click", () => {
    const peer = state.view?.peerId;
    if (peer) setBlocked(peer, !state.blocked.has(peer));
  });
  $("nickname-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const serverId = state.members?.serverId;
    if (!serverId) return;
    try {
      await gh.request({ setNickname: { serverId, nickname: $("nickname-input").value.trim() } });
      await loadMembers(serverId);
      renderMessages();
    } catch (err) { showError("view-error", err); }
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
  $("pins-close").addEventListener("click", () => { $("pins").hidden = true; });
  $("members-more").addEventListener("click", () => moreMembers().catch(() => {}));
  $("invite-people").addEventListener("click", () => makeInvite());
  $("invite-cancel").addEventListener("click", () => { $("invite-screen").hidden = true; });
  $("presence-choice").addEventListener("change", async () => {
    try {
      await gh.request({ setPresence: { status: $("presence-choice").value } });
    } catch (err) { showError("view-error", err); }
  });
  $("text").addEventListener("input", () => {
    if (!state.view || Date.now() - state.lastTyping < 3000) return;
    state.lastTyping = Date.now();
    // A direct conversation's typing goes to its other members.
    const to = state.view.kind === "channel" ? { channelId: state.view.channelId } : { conversationId: state.view.conversationId };
    gh.request({ sendTyping: to }).catch(() => {});
  });
  $("messages").addEventListener("scroll", () => {
    if ($("messages").scrollTop < 30 && state.moreAbove) loadAbove();
    if (atBottom() && state.moreBelow) loadBelow();
    if (atBottom()) seen();
  });
  $("jump-present").addEventListener("click", () => { if (state.view) openView(state.view, true); });
  document.addEventListener("visibilitychange", () => seen());
  $("reply-cancel").addEventListener("click", () => { state.replyTo = null; $("replying").hidden = true; });
  $("readers-close").addEventListener("click", () => { $("readers").hidden = true; });
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
