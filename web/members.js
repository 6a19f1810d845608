// A server's member list (a watched window: joins, leaves, roles, names and
// presence come live), moderation from it, one's nickname, and the audit log.

import { renderChannels } from "./lists.js";
import { renderMessages } from "./messages.js";
import { $, el, gh, learnNames, nameOf, showError, state } from "./page.js";

// ---- the member list ----

/** The first page of a server's member list, watched; the last server's watch ends. */
export async function loadMembers(serverId) {
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

export async function moreMembers() {
  const m = state.members;
  if (!m?.next) return;
  const r = await gh.request({ listMembers: { serverId: m.serverId, cursor: m.next, limit: 100 } });
  if (state.members !== m) return;
  m.list = [...m.list, ...(r.members.members || []).filter((x) => !m.list.some((y) => y.userId === x.userId))];
  learnNames(m.list);
  m.next = r.members.nextCursor || "";
  renderMembers();
}

export function renderMembers() {
  const m = state.members;
  // A conversation shows no server's members.
  $("members").hidden = !m || state.view?.kind === "dm";
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
  const item = (x) => {
    const status = x.presence?.status || "PRESENCE_OFFLINE";
    const label = { PRESENCE_ONLINE: "online", PRESENCE_IDLE: "idle", PRESENCE_DO_NOT_DISTURB: "do not disturb" }[status] || "offline";
    const other = x.userId !== state.me && x.role !== "OWNER";
    return el("li", { class: `member ${status === "PRESENCE_OFFLINE" ? "offline" : ""}`, dataset: { user: x.userId, status } },
      el("span", { class: `presence ${status}`, role: "img", "aria-label": label, title: label }),
      x.avatar ? el("img", { class: "avatar", src: x.avatar, alt: "" }) : el("span", { class: "avatar", "aria-hidden": "true" }, initialOf(x.nickname || x.displayName || x.userId)),
      el("span", { class: "name", title: x.userId }, x.nickname || x.displayName || x.userId),
      Number(x.timeoutUntil || 0) > Date.now() ? el("span", { class: "timed-out", title: `timed out until ${new Date(Number(x.timeoutUntil)).toLocaleString()}` }, "⏳") : null,
      x.presence?.customText ? el("span", { class: "status-text" }, x.presence.customText) : null,
      moderator && other ? el("span", { class: "moderate" },
        el("button", { type: "button", class: "timeout-action", title: `time ${x.userId} out for 10 minutes`, onclick: () => moderate("timeoutMember", x.userId, { until: String(Date.now() + 600_000) }) }, "Time out"),
        el("button", { type: "button", class: "kick-action", title: `remove ${x.userId}`, onclick: () => moderate("kickMember", x.userId) }, "Kick"),
        el("button", { type: "button", class: "ban-action", title: `ban ${x.userId}`, onclick: () => moderate("banMember", x.userId) }, "Ban")) : null);
  };
  // Grouped as a chat shows them: the owner, the admins, then everyone else online, then offline.
  const groups = [["Owner", (x) => x.role === "OWNER"], ["Admins", (x) => x.role === "ADMIN"],
                  ["Online", (x) => (x.presence?.status || "PRESENCE_OFFLINE") !== "PRESENCE_OFFLINE"], ["Offline", () => true]];
  const placed = new Set();
  $("member-list").replaceChildren(...groups.flatMap(([title, holds]) => {
    const those = m.list.filter((x) => !placed.has(x.userId) && holds(x));
    those.forEach((x) => placed.add(x.userId));
    if (!those.length) return [];
    const id = `members-${title.toLowerCase()}`;
    return [el("h4", { id }, `${title} — ${those.length}`), el("ul", { "aria-labelledby": id }, those.map(item))];
  }));
}

/** The first letter of a name, for one who has no avatar. */
export function initialOf(name) { return ([...(name || "?")][0] || "?").toUpperCase(); }

/// A moderation request on a member of the shown server, with the reason typed above the list.
export async function moderate(kind, userId, extra = {}) {
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

export const AUDIT_WORDS = {
  AUDIT_SERVER_UPDATED: "changed the server", AUDIT_OWNERSHIP_TRANSFERRED: "handed the server to", AUDIT_CHANNEL_CREATED: "made channel",
  AUDIT_CHANNEL_UPDATED: "changed channel", AUDIT_CHANNEL_DELETED: "deleted channel", AUDIT_MEMBER_INVITED: "invited",
  AUDIT_MEMBER_KICKED: "removed", AUDIT_MEMBER_BANNED: "banned", AUDIT_MEMBER_UNBANNED: "unbanned", AUDIT_MEMBER_TIMED_OUT: "timed out",
  AUDIT_MEMBER_ROLES_CHANGED: "changed the roles of", AUDIT_ROLE_CREATED: "made role", AUDIT_ROLE_UPDATED: "changed role",
  AUDIT_ROLE_DELETED: "deleted role", AUDIT_OVERRIDE_CHANGED: "set an override for", AUDIT_MESSAGE_RECALLED: "recalled a message of",
  AUDIT_MESSAGE_DELETED: "deleted a message", AUDIT_MESSAGE_PINNED: "pinned a message", AUDIT_MESSAGE_UNPINNED: "unpinned a message",
  AUDIT_INVITE_CREATED: "made invite", AUDIT_INVITE_REVOKED: "revoked invite", AUDIT_MEMBER_NICKNAME_CHANGED: "renamed",
};

/// What an entry was made to, as the page knows it: a member's name, a channel's, or the id.
export function auditTarget(e) {
  if (!e.target) return "";
  if (!/^\d+$/.test(e.target)) return e.action.startsWith("AUDIT_INVITE") ? e.target : nameOf(e.target);
  const channel = state.servers.get(state.currentServer)?.channels.get(e.target);
  return channel ? `#${channel.name}` : e.target;
}

export async function showAudit() {
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

/** Hooks this module's controls to the page. */
export function wireMembers() {
  $("audit-open").addEventListener("click", () => showAudit());
  $("audit-close").addEventListener("click", () => { $("audit").hidden = true; });
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
  $("members-more").addEventListener("click", () => moreMembers().catch(() => {}));
}
