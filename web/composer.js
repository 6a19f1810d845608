// Writing: the message box, files waiting to be sent (attach, drop, paste)
// and their uploads, sending, and telling others one types.

import { editLast, refreshReceipts } from "./messages.js";
import { attachPicker } from "./picker.js";
import { $, el, gh, showError, sizeText, state } from "./page.js";
import { addMessage } from "./view.js";

// ---- files waiting to be sent ----

export function addFiles(files) {
  if (!state.view) return;
  for (const file of files) state.pending.push({ file, progress: 0 });
  renderPending();
}

export function renderPending() {
  $("pending-files").replaceChildren(...state.pending.map((p, i) =>
    el("li", { class: "pending" },
      el("span", { class: "filename" }, p.file.name), ` ${sizeText(p.file.size)}`,
      p.progress > 0 ? el("progress", { max: 1, value: p.progress }) : null,
      state.sending ? null : el("button", { type: "button", title: `remove ${p.file.name}`, "aria-label": `remove ${p.file.name}`,
                                            onclick: () => { state.pending.splice(i, 1); renderPending(); } }, "×"))));
  $("pending-files").hidden = state.pending.length === 0;
}

/** Uploads one file for the view (asks for an upload, then PUTs the bytes with progress); its file id. */
export async function upload(p, view) {
  const where = view === "avatar" ? { avatar: true } : view.serverIcon ? { serverIcon: view.serverIcon }
    : view.kind === "channel" ? { channelId: view.channelId } : { conversationId: view.conversationId };
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

export async function send(text) {
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


/** Members to mention for the "@word" before the caret (a channel's only): the list's first, or the server's search. */
async function suggestMentions(text, field) {
  const typed = text.slice(0, field.selectionStart).match(/(?:^|\s)@([^\s@]*)$/);
  const view = state.view;
  if (!typed || view?.kind !== "channel") return [];
  const q = typed[1].toLowerCase();
  let members = state.members?.serverId === view.serverId ? state.members.list : [];
  if (q) {
    try { members = (await gh.request({ listMembers: { serverId: view.serverId, query: q, limit: 9 } })).members.members || []; } catch { members = []; }
  }
  const found = members.filter((x) => x.userId !== state.me)
    .map((x) => ({ key: x.userId, label: x.nickname || x.displayName || x.userId, detail: x.userId })).slice(0, 8);
  if (state.mayMentionEveryone && "everyone".startsWith(q)) found.push({ key: "everyone", label: "@everyone", detail: "notifies everyone here" });
  return found;
}

/** Hooks this module's controls to the page. */
export function wireComposer() {
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
  // "@" lists the server's members (and everyone, for those allowed to mention all);
  // the one chosen is written as @id, which the message mentions.
  attachPicker($("text"), $("mention-suggestions"), { suggest: suggestMentions, choose: (item, field) => {
    const at = field.selectionStart, before = field.value.slice(0, at).replace(/@([^\s@]*)$/, `@${item.key} `);
    field.value = before + field.value.slice(at);
    field.setSelectionRange(before.length, before.length);
  } });
  // Up in an empty box edits one's last message.
  $("text").addEventListener("keydown", (e) => {
    if (e.key === "ArrowUp" && !$("text").value && state.view && editLast()) e.preventDefault();
  });
  $("text").addEventListener("input", () => {
    if (!state.view || Date.now() - state.lastTyping < 3000) return;
    state.lastTyping = Date.now();
    // A direct conversation's typing goes to its other members.
    const to = state.view.kind === "channel" ? { channelId: state.view.channelId } : { conversationId: state.view.conversationId };
    gh.request({ sendTyping: to }).catch(() => {});
  });
}
