// What the server pushes, applied to the page: messages, unread counts,
// presence, the member list, typing, receipts, message changes, notifications.

import { closeView, conversationName, loadConversations, loadServers, notifyHidden, renderChannels, renderConversations, renderServers } from "./lists.js";
import { loadMembers, renderMembers } from "./members.js";
import { refreshReceipts, renderMessages } from "./messages.js";
import { renderThread } from "./thread.js";
import { $, gh, learnNames, state } from "./page.js";
import { addMessage, seen, updateMessage, viewChannelId } from "./view.js";

// ---- server events ----

export function setUnread(info) {
  if (!info || !info.channelId) return;
  state.unread.set(info.channelId, info);
  renderServers();
  renderChannels();
}

export const handlers = {
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
  messageUpdate(u) {
    if (!u.message) return;
    const replace = (m) => { Object.keys(m).forEach((k) => delete m[k]); Object.assign(m, u.message); };
    updateMessage(u.message.uid, replace);
    // The open thread's root or one of its replies.
    const t = state.thread;
    const inThread = t && [t.root, ...t.replies].find((m) => m.uid === u.message.uid);
    if (inThread) { replace(inThread); renderThread(); }
  },
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

export function renderTyping() {
  const id = viewChannelId() || null;
  const now = Date.now();
  const names = (state.typers.get(id) || []).filter((t) => t.until > now).map((t) => t.userId);
  $("typing").textContent = names.length === 0 ? "" : names.length === 1 ? `${names[0]} is typing…` : `${names.join(", ")} are typing…`;
}
setInterval(renderTyping, 1000);
