// One message as shown (sender, text, files, receipts, ticks, reactions) and
// what one can do to it: reply, react, edit, recall, delete, pin, ask receipts.

import { $, el, gh, nameOf, showError, sizeText, state } from "./page.js";
import { showPins } from "./panels.js";
import { pickReaction, react, showReactors } from "./reactions.js";
import { openThread } from "./thread.js";
import { addMessage, jumpTo, loadAbove, updateMessage, viewChannelId } from "./view.js";

// Reaction types as this client shows them: 1 to 4 as every Guildhall client
// has, then the picker's (docs/web-client.md, "Reactions").
export const EMOJI = ["👍", "❤️", "😂", "🎉", "😮", "😢", "🙏", "👀", "🔥", "✅", "❌", "👏", "🤔", "💯", "🚀", "😍",
                      "😎", "🙌", "👎", "😡", "🥳", "💡", "⭐", "🍕", "☕", "🐛", "📌", "⚠️", "❓", "👋", "🤝", "😴"];

export function emojiOf(type) { return EMOJI[type - 1] || `#${type}`; }

// ---- messages ----

export function receiptLine(m) {
  const r = m.receipt;
  if (m.senderId !== state.me || !(m.needReceipt || r?.requested) || r?.countHidden) return null;
  const others = Math.max(0, Number(r?.memberCount || 0) - 1);
  return el("span", { class: "receipt", title: "who read it", onclick: () => showReaders(m.uid) },
    `read by ${Number(r?.readerCount || 0)} of ${others}`);
}

export function ticks(m) {
  if (state.view?.kind !== "dm" || m.senderId !== state.me) return null;
  const status = m.sentStatus || "SENT";
  const mark = { SENDING: "…", SENT: "✓", DELIVERED: "✓✓", READ: "✓✓" }[status] || "✓";
  // In a group: how many of the others read it.
  const of = Number(m.recipientCount || 0);
  const text = of > 1 && status !== "SENDING" ? `${mark} read by ${Number(m.readCount || 0)} of ${of}` : `${mark} ${status.toLowerCase()}`;
  return el("span", { class: "ticks", dataset: { status }, title: status.toLowerCase() }, text);
}

/** A message's files: images, audio and video shown, other files as links to save. */
export function attachmentsOf(m) {
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

/** "Today", "Yesterday", or the date, for the divider above a day's first message. */
function dayLabel(time) {
  const d = new Date(time), today = new Date();
  const yesterday = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 1);
  if (d.toDateString() === today.toDateString()) return "Today";
  if (d.toDateString() === yesterday.toDateString()) return "Yesterday";
  return d.toLocaleDateString(undefined, { weekday: "long", year: "numeric", month: "long", day: "numeric" });
}

/** Whether `m` continues `prev`'s group: the same author (or webhook) within five minutes, the same day, no quote. */
function continues(prev, m) {
  if (!prev || prev.removal?.kind || m.replyTo?.messageUid) return false;
  const a = Number(prev.sentTime || 0), b = Number(m.sentTime || 0);
  return prev.senderId === m.senderId && (prev.webhook?.webhookId || "") === (m.webhook?.webhookId || "")
    && b - a < 5 * 60_000 && new Date(a).toDateString() === new Date(b).toDateString();
}

/** The message's text, with the mentions of its members and of everyone marked. */
function textOf(m) {
  const text = m.body?.text ?? (m.body?.custom ? `[${m.body.custom.type}]` : "");
  const named = new Set((m.mentions || []).map((id) => id.toLowerCase()));
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(/(^|\s)@([^\s@]+)/g)) {
    const word = match[2].toLowerCase(), at = match.index + match[1].length;
    const marked = word === "everyone" ? m.mentionAll : named.has(word);
    if (!marked) continue;
    parts.push(text.slice(last, at), el("span", { class: "mention", title: match[2] }, word === "everyone" ? "@everyone" : `@${nameOf(match[2])}`));
    last = at + 1 + match[2].length;
  }
  parts.push(text.slice(last));
  return parts;
}

function avatarOf(m) {
  if (m.webhook?.avatar) return el("span", { class: "avatar" }, el("img", { src: m.webhook.avatar, alt: "" }));
  const picture = state.avatars.get(m.senderId);
  if (picture) return el("span", { class: "avatar" }, el("img", { src: picture, alt: "" }));
  return el("span", { class: "avatar", "aria-hidden": "true" }, ([...(m.webhook?.name || nameOf(m.senderId))][0] || "?").toUpperCase());
}

/** One message; `first`: it starts a group (avatar and name shown). */
export function renderMessage(m, first = true, inThread = false) {
  const removed = m.removal && m.removal.kind;
  const own = m.senderId === state.me;
  const channel = state.view?.kind === "channel";
  const editing = state.editing === m.uid && !removed;
  const mentionsMe = !own && !removed && ((m.mentions || []).includes(state.me) || m.mentionAll);
  const time = new Date(Number(m.sentTime || 0));
  const actions = removed ? [] : [
    el("button", { type: "button", class: "reply-action", onclick: () => startReply(m) }, "Reply"),
    el("button", { type: "button", class: "react-action", "aria-label": "add a reaction", "aria-haspopup": "dialog", onclick: (e) => pickReaction(m, e.currentTarget) }, "☺+"),
    channel && !inThread && !Number(m.threadRoot || 0) ? el("button", { type: "button", class: "thread-action", onclick: () => openThread(m) }, "Thread") : null,
    own && m.body?.text !== undefined ? el("button", { type: "button", class: "edit-action", onclick: () => startEdit(m) }, "Edit") : null,
    own ? el("button", { type: "button", class: "recall-action", onclick: () => confirm(`Recall this message? Everyone sees "message recalled" instead.`) && operate("recallMessage", m) }, "Recall") : null,
    el("button", { type: "button", class: "delete-action", onclick: () => confirm("Delete this message? This cannot be undone.") && operate("deleteMessage", m) }, "Delete"),
    own && channel && !(m.needReceipt || m.receipt?.requested)
      ? el("button", { type: "button", class: "receipt-action", onclick: () => askReceipts(m) }, "Ask receipts") : null,
    channel ? el("button", { type: "button", class: "pin-action", onclick: () => operate("pinMessage", m).then(showPins) }, "Pin") : null,
  ];
  const replies = Number(m.threadReplyCount || 0);
  return el("div", { class: `message${first ? " first" : ""}${removed ? " removed" : ""}${own ? " own" : ""}${mentionsMe ? " mentions-me" : ""}`,
                     dataset: { uid: m.uid, seq: m.seq || "" }, tabindex: -1, role: "article",
                     "aria-label": `${m.webhook?.name || nameOf(m.senderId)}, ${time.toLocaleString()}` },
    m.replyTo?.messageUid ? el("button", { type: "button", class: "reply", title: "show the message this answers",
                                           onclick: () => showOriginal(m.replyTo.messageUid) },
      `↪ ${nameOf(m.replyTo.senderId)}: ${m.replyTo.excerpt || ""}`) : null,
    first ? avatarOf(m) : null,
    el("div", { class: "head" },
      m.webhook?.webhookId
        ? el("span", { class: "sender webhook", title: `webhook ${m.webhook.webhookId}` }, m.webhook.name, el("span", { class: "tag" }, "webhook"))
        : el("span", { class: "sender", title: m.senderId }, nameOf(m.senderId)),
      el("time", { class: "time", datetime: time.toISOString(), title: time.toLocaleString() },
         time.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" }))),
    editing ? editBox(m) : el("span", { class: "text" }, removed ? (m.removal.kind === "RECALLED" ? "message recalled" : "message deleted") : textOf(m)),
    m.editedTime && !removed && !editing ? el("span", { class: "edited" }, "(edited)") : null,
    removed ? null : attachmentsOf(m),
    receiptLine(m),
    ticks(m),
    (m.reactions || []).length ? el("div", { class: "reactions" }, m.reactions.map((r) =>
      el("button", { type: "button", class: `reaction${r.mine ? " mine" : ""}`, dataset: { type: r.type }, "aria-pressed": String(!!r.mine),
                     "aria-label": `${emojiOf(r.type)} ${r.count}`, onclick: () => react(m, r.type),
                     onmouseenter: (e) => showReactors(m, r.type, r.count, e.currentTarget), onfocus: (e) => showReactors(m, r.type, r.count, e.currentTarget) },
        `${emojiOf(r.type)} ${r.count}`))) : null,
    replies && !inThread ? el("button", { type: "button", class: "thread-link", onclick: () => openThread(m) }, `${replies} ${replies === 1 ? "reply" : "replies"}`) : null,
    el("div", { class: "actions", role: "toolbar", "aria-label": "message actions" }, actions));
}

/** The view's messages: a divider at each new day, the "new" line at the first unread, groups by author. */
export function renderMessages() {
  const box = $("messages");
  const items = [];
  if (state.moreAbove) items.push(el("div", { class: "more" }, "scroll up for older messages"));
  let prev = null, lineDrawn = false;
  for (const m of state.messages) {
    const day = new Date(Number(m.sentTime || 0)).toDateString();
    const newDay = !prev || new Date(Number(prev.sentTime || 0)).toDateString() !== day;
    if (newDay) items.push(el("div", { class: "day", role: "separator" }, dayLabel(Number(m.sentTime || 0))));
    // (Only where the message before it is shown: else the first unread lies further up.)
    const firstUnread = !lineDrawn && isUnreadMark(m) && (prev ? !isUnreadMark(prev) : !state.moreAbove);
    if (firstUnread) { items.push(el("div", { class: "new-line", id: "new-line", role: "separator" }, "New messages")); lineDrawn = true; }
    items.push(renderMessage(m, newDay || firstUnread || !continues(prev, m)));
    prev = m;
  }
  if (state.moreBelow) items.push(el("div", { class: "more" }, "scroll down for newer messages"));
  const focused = document.activeElement?.closest?.("#messages .message")?.dataset.uid;
  box.replaceChildren(...items);
  if (state.focus) box.querySelector(`.message[data-uid="${state.focus}"]`)?.classList.add("focus");
  if (focused && !state.editing) box.querySelector(`.message[data-uid="${focused}"]`)?.focus({ preventScroll: true });
  const editField = state.editing && box.querySelector(".edit-box input");
  if (editField) { editField.focus({ preventScroll: true }); editField.setSelectionRange(editField.value.length, editField.value.length); }
  $("jump-present").hidden = !state.moreBelow;
  showJumpToUnread();
}

/** Whether `m` is the first message the view had not read when it was opened. */
function isUnreadMark(m) {
  const mark = state.firstUnread;
  if (!mark || m.senderId === state.me) return false;
  return mark.seq !== undefined ? BigInt(m.seq || 0) >= mark.seq : BigInt(m.sentTime || 0) > mark.time;
}

/** "Jump to the first unread" shows while the "new" line is not loaded or above the view. */
export function showJumpToUnread() {
  const line = $("new-line"), box = $("messages");
  const above = line ? line.offsetTop < box.scrollTop : !!state.firstUnread && state.firstUnread.unread > 0 && state.moreAbove;
  $("jump-unread").hidden = !above;
}

/** Brings the first unread message into view, paging back until it is loaded. */
export async function jumpToUnread() {
  for (let i = 0; i < 40 && !$("new-line") && state.moreAbove; i++) await loadAbove();
  $("new-line")?.scrollIntoView({ block: "start" });
  showJumpToUnread();
}

/** Scrolls to the message a reply quotes, loading the stretch around it when it is not shown. */
async function showOriginal(uid) {
  let target = document.querySelector(`#messages .message[data-uid="${uid}"]`);
  if (!target) {
    try {
      const original = (await gh.request({ getMessages: { uids: [uid] } })).messages.messages?.[0];
      if (!original) return;
      await jumpTo(state.view, original);
    } catch (err) { showError("view-error", err); return; }
  }
  state.focus = uid;
  renderMessages();
  target = document.querySelector(`#messages .message[data-uid="${uid}"]`);
  target?.scrollIntoView({ block: "center" });
  target?.focus({ preventScroll: true });
}

export function startReply(m) {
  state.replyTo = m;
  $("replying").hidden = false;
  $("replying").querySelector("span").textContent = `replying to ${nameOf(m.senderId)}: ${(m.body?.text || "").slice(0, 60)}`;
  $("text").focus();
}

// ---- editing in place ----

/** Edits `m` in place: its text becomes a field (Enter saves, Escape cancels). */
export function startEdit(m) {
  state.editing = m.uid;
  state.editDraft = null;
  renderMessages();
}

function editBox(m) {
  // What is typed outlives a redraw (a message arriving meanwhile).
  const field = el("input", { value: state.editDraft ?? m.body?.text ?? "", "aria-label": "edit the message", maxlength: 4000,
                              oninput: (e) => { state.editDraft = e.target.value; } });
  const stop = () => { state.editing = null; state.editDraft = null; renderMessages(); $("text").focus(); };
  field.addEventListener("keydown", async (e) => {
    if (e.key === "Escape") { e.preventDefault(); stop(); }
    if (e.key === "Enter") {
      e.preventDefault();
      const text = field.value;
      if (!text.trim() || text === m.body?.text) return stop();
      try {
        const r = await gh.request({ editMessage: { channelId: viewChannelId(), messageUid: m.uid, body: { text } } });
        state.editing = null;
        state.editDraft = null;
        if (r.message) addMessage(r.message); else renderMessages();
        $("text").focus();
      } catch (err) { showError("view-error", err); }
    }
  });
  return el("div", { class: "edit-box" }, field, el("span", { class: "edit-hint" }, "Enter to save · Escape to cancel"));
}

/** Up in an empty message box edits one's last message. */
export function editLast() {
  const mine = [...state.messages].reverse().find((m) => m.senderId === state.me && !m.removal?.kind && m.body?.text !== undefined);
  if (mine) startEdit(mine);
  return !!mine;
}

export async function operate(kind, m) {
  try {
    const r = await gh.request({ [kind]: { channelId: viewChannelId(), messageUid: m.uid } });
    if (r.message) addMessage(r.message);
  } catch (err) { showError("view-error", err); }
}

/** Receipt info of messages as the server has it now (reader count, and N: the members now). */
export async function refreshReceipts(uids) {
  for (let i = 0; i < uids.length; i += 100) {
    try {
      const r = await gh.request({ getReceiptInfo: { messageUids: uids.slice(i, i + 100) } });
      for (const info of r.receipts.receipts || []) updateMessage(info.messageUid, (m) => { m.receipt = info; });
    } catch (err) { showError("view-error", err); }
  }
}

export async function askReceipts(m) {
  try {
    const r = await gh.request({ requestReceipt: { messageUid: m.uid } });
    for (const info of r.receipts.receipts || []) updateMessage(info.messageUid, (x) => { x.receipt = info; });
  } catch (err) { showError("view-error", err); }
}

export async function showReaders(uid) {
  try {
    const r = await gh.request({ getReceiptReaders: { messageUid: uid, limit: 100 } });
    $("reader-list").replaceChildren(...(r.readers.readers || []).map((x) =>
      el("li", { class: "reader" }, `${x.userId} · ${new Date(Number(x.readTime || 0)).toLocaleTimeString()}`)));
    $("readers").hidden = false;
  } catch (err) { showError("view-error", err); }
}

/** Hooks this module's controls to the page. */
export function wireMessages() {
  $("reply-cancel").addEventListener("click", () => { state.replyTo = null; $("replying").hidden = true; });
  $("readers-close").addEventListener("click", () => { $("readers").hidden = true; });
}
