// The open view: one channel or one conversation. Pages history up and down,
// jumps to a message, keeps new messages in place, and marks read at the bottom.

import { renderPending } from "./composer.js";
import { conversationName, isMuted, renderChannels, renderConversations, renderServers, setMuted } from "./lists.js";
import { jumpToUnread, refreshReceipts, renderMessages, showJumpToUnread } from "./messages.js";
import { renderMembers } from "./members.js";
import { $, PAGE, gh, showError, state } from "./page.js";
import { closeThread, threadMessage } from "./thread.js";

// ---- a view: one channel or one conversation ----

/** The first unread message of a view about to open: a channel's by seq, a conversation's by time. */
function unreadMark(view) {
  if (view.kind === "channel") {
    const u = state.unread.get(view.channelId);
    // The count is exact (the display cap is the badge's): the unread are the last `unreadCount` seqs.
    return u && Number(u.unreadCount || 0) > 0 ? { seq: BigInt(u.lastSeq || 0) - BigInt(u.unreadCount) + 1n, unread: Number(u.unreadCount) } : null;
  }
  const c = state.conversations.get(view.conversationId);
  return c && Number(c.unreadCount || 0) > 0 ? { time: BigInt(c.readTime || 0), unread: Number(c.unreadCount) } : null;
}

/** The open channel's Mute button (this device's choice). */
export function renderMute() {
  const channel = state.view?.kind === "channel" ? state.view.channelId : null;
  $("mute-channel").hidden = !channel;
  if (!channel) return;
  const muted = isMuted(channel);
  $("mute-channel").textContent = muted ? "Unmute" : "Mute";
  $("mute-channel").setAttribute("aria-pressed", String(muted));
}

/** Thread replies show in their thread's pane, not among the channel's messages. */
function inChannel(m) { return !Number(m.threadRoot || 0); }

export function targetOf(view) { return [{ serverId: view.serverId, channelId: view.channelId }]; }

/** Opens a view at one of its messages (a search hit): the stretch around it, the message marked. */
export async function jumpTo(view, m) {
  const open = state.view?.kind === view.kind && state.view.channelId === view.channelId;
  if (!open || !state.messages.some((x) => x.uid === m.uid)) {
    await openView(view, false, m.seq);
  }
  state.focus = m.uid;
  renderMessages();
  document.querySelector(`#messages .message[data-uid="${m.uid}"]`)?.scrollIntoView({ block: "center" });
}

/** `at`: a seq to open at (else the newest). */
export async function openView(view, again = false, at = null) {
  const old = state.view;
  if (!again && old?.kind === "channel" && !(view.kind === "channel" && view.channelId === old.channelId)) {
    for (const type of ["CHANNEL_MSG", "CHANNEL_TYPING"]) {
      gh.request({ subscribe: { type, operation: "UNSUBSCRIBE", targets: targetOf(old) } }).catch(() => {});
    }
  }
  const same = old && (old.kind === "channel" ? old.channelId === view.channelId : old.conversationId === view.conversationId);
  if (!same) { closeThread(); state.editing = null; }
  // Where the "new" line goes: the first message not read when the view was opened (kept while it stays open).
  if (!again || !same) state.firstUnread = unreadMark(view);
  state.view = view;
  // The sidebar follows what is open: a conversation's list at Home, a channel's server otherwise.
  state.home = view.kind === "dm";
  renderMembers();
  state.messages = [];
  state.moreBelow = false;
  state.mayMentionEveryone = false;
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
    gh.request({ getPermissions: { serverId: view.serverId, channelId: view.channelId } }).then((r) => {
      if (state.view === view) state.mayMentionEveryone = (BigInt(r.permissions.granted || 0) & 64n) !== 0n;
    }).catch(() => {});
    for (const type of ["CHANNEL_MSG", "CHANNEL_TYPING"]) {
      await gh.request({ subscribe: { type, operation: "SUBSCRIBE", targets: targetOf(view) } });
    }
  } else {
    $("view-title").textContent = conversationName(state.conversations.get(view.conversationId) || { peerId: view.peerId });
    $("need-receipt").parentElement.hidden = true;
  }
  $("composer").hidden = false;
  $("pins-open").hidden = view.kind !== "channel";
  renderMute();
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
export async function loadBelow() {
  if (state.loadingAbove || !state.view || !state.moreBelow && state.messages.length) return;
  const view = state.view, newest = state.messages[state.messages.length - 1];
  state.loadingAbove = true;
  try {
    const r = await gh.request({ getHistory: { channelId: viewChannelId(), seq: newest ? newest.seq : "0", direction: "AFTER", limit: PAGE } });
    if (view !== state.view) return;
    const page = (r.messages.messages || []).filter((m) => inChannel(m) && !state.messages.some((x) => x.uid === m.uid));
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
export function refreshServer(serverId) {
  gh.request({ getServers: { serverIds: [serverId] } }).then((r) => {
    const info = (r.servers.servers || [])[0], s = state.servers.get(serverId);
    if (info && s) s.info = info;
    renderServers();
    renderChannels();
  }).catch(() => {});
}

export function viewChannelId() { return state.view?.kind === "channel" ? state.view.channelId : state.view?.conversationId; }

/** `from`: the seq to page back from when nothing is shown yet (a jump's), else the oldest shown, or the newest. */
export async function loadAbove(from = null) {
  if (state.loadingAbove || !state.view) return;
  state.loadingAbove = true;
  const view = state.view;
  try {
    const oldest = state.messages[0];
    const anchor = oldest ? oldest.seq : from !== null ? String(from) : "0";
    if (from !== null) state.moreBelow = true;
    const r = await gh.request({ getHistory: { channelId: viewChannelId(), seq: anchor, direction: "BEFORE", limit: PAGE } });
    if (view !== state.view) return;
    const page = (r.messages.messages || []).filter((m) => inChannel(m) && !state.messages.some((x) => x.uid === m.uid));
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

export function atBottom() {
  const box = $("messages");
  return box.scrollHeight - box.scrollTop - box.clientHeight < 40;
}

export function scrollToBottom() { const box = $("messages"); box.scrollTop = box.scrollHeight; }

/** The view is at its newest message: mark it read, answer receipt requests, send a read receipt. */
export async function seen() {
  const view = state.view;
  if (!view || !atBottom() || document.visibilityState === "hidden") return;
  const newest = state.messages[state.messages.length - 1];
  if (view.kind === "channel") {
    const u = state.unread.get(view.channelId);
    // Thread replies are not in the list, yet they are read with the channel.
    const seqs = [newest?.seq, state.latestReply?.channelId === view.channelId ? state.latestReply.seq : null].filter(Boolean);
    const latest = seqs.length ? seqs.reduce((a, b) => (BigInt(a) > BigInt(b) ? a : b)) : null;
    if (latest && (!u || Number(u.unreadCount || 0) > 0 || BigInt(u.readSeq || 0) < BigInt(latest))) {
      gh.request({ markRead: { channelId: view.channelId, seq: latest } }).then((r) => {
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

export function updateMessage(uid, change) {
  const m = state.messages.find((x) => x.uid === uid);
  if (!m) return false;
  change(m);
  renderMessages();
  return true;
}

export function addMessage(m) {
  if (!inChannel(m)) {
    // A reply in a thread: the thread shows it, and its root counts it.
    threadMessage(m);
    state.latestReply = { channelId: m.channelId, seq: m.seq };
    // The root as the server has it now counts the replies.
    if (state.messages.some((x) => x.uid === m.threadRoot)) {
      gh.request({ getMessages: { uids: [m.threadRoot] } }).then((r) => {
        const root = r.messages.messages?.[0];
        if (root) updateMessage(root.uid, (x) => { x.threadReplyCount = root.threadReplyCount; x.threadLastReplyTime = root.threadLastReplyTime; });
      }).catch(() => {});
    }
    seen();
    return;
  }
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

/** Hooks this module's controls to the page. */
export function wireView() {
  $("messages").addEventListener("scroll", () => {
    if ($("messages").scrollTop < 30 && state.moreAbove) loadAbove();
    if (atBottom() && state.moreBelow) loadBelow();
    if (atBottom()) seen();
    showJumpToUnread();
  });
  $("jump-present").addEventListener("click", () => { if (state.view) openView(state.view, true); });
  $("jump-unread").addEventListener("click", () => jumpToUnread());
  $("mute-channel").addEventListener("click", () => {
    const channel = state.view?.channelId;
    if (!channel) return;
    setMuted(channel, !isMuted(channel));
    renderMute();
  });
  // The list is one stop for Tab; Up and Down move between messages, Home and End to the ends,
  // and Tab then reaches the focused message's actions.
  $("messages").addEventListener("keydown", (e) => {
    if (e.target.closest(".edit-box")) return;
    const all = [...$("messages").querySelectorAll(".message")];
    if (!all.length || !["ArrowUp", "ArrowDown", "Home", "End"].includes(e.key)) return;
    const at = all.indexOf(e.target.closest(".message"));
    const next = { ArrowUp: at < 0 ? all.length - 1 : Math.max(0, at - 1), ArrowDown: at < 0 ? all.length - 1 : Math.min(all.length - 1, at + 1), Home: 0, End: all.length - 1 }[e.key];
    e.preventDefault();
    all[next].focus();
    all[next].scrollIntoView({ block: "nearest" });
  });
  document.addEventListener("visibilitychange", () => seen());
}
