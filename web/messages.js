// One message as shown (sender, text, files, receipts, ticks, reactions) and
// what one can do to it: reply, react, edit, recall, delete, pin, ask receipts.

import { $, el, gh, nameOf, showError, sizeText, state } from "./page.js";
import { showPins } from "./panels.js";
import { addMessage, updateMessage, viewChannelId } from "./view.js";

export const REACTIONS = { 1: "👍", 2: "❤️", 3: "😂", 4: "🎉" };

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

export function renderMessage(m) {
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

export function renderMessages() {
  const box = $("messages");
  const items = state.messages.map(renderMessage);
  if (state.moreAbove) items.unshift(el("div", { class: "more" }, "scroll up for older messages"));
  if (state.moreBelow) items.push(el("div", { class: "more" }, "scroll down for newer messages"));
  box.replaceChildren(...items);
  if (state.focus) box.querySelector(`.message[data-uid="${state.focus}"]`)?.classList.add("focus");
  $("jump-present").hidden = !state.moreBelow;
}

export function startReply(m) {
  state.replyTo = m;
  $("replying").hidden = false;
  $("replying").querySelector("span").textContent = `replying to ${m.senderId}: ${(m.body?.text || "").slice(0, 60)}`;
  $("text").focus();
}

export async function react(m, type) {
  const mine = (m.reactions || []).some((r) => r.type === type && r.mine);
  try {
    const r = await gh.request({ [mine ? "removeReaction" : "addReaction"]: { channelId: viewChannelId(), messageUid: m.uid, type } });
    if (r.message) addMessage(r.message);
  } catch (err) { showError("view-error", err); }
}

export async function edit(m) {
  const text = prompt("Edit message", m.body?.text || "");
  if (text === null || !text.trim()) return;
  try {
    const r = await gh.request({ editMessage: { channelId: viewChannelId(), messageUid: m.uid, body: { text } } });
    if (r.message) addMessage(r.message);
  } catch (err) { showError("view-error", err); }
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
