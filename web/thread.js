// The thread pane: a root message, its replies oldest first (kept live), and
// a field to reply in the thread. Thread replies show here, not in the channel.

import { renderMessage } from "./messages.js";
import { $, gh, showError, state } from "./page.js";
import { addMessage } from "./view.js";

/** Opens `root`'s thread beside the channel. */
export async function openThread(root) {
  const channelId = root.channelId;
  state.thread = { root, replies: [], channelId };
  $("thread").hidden = false;
  renderThread();
  try {
    let after = "0";
    for (let i = 0; i < 20; i++) {
      const page = (await gh.request({ getThread: { channelId, rootUid: root.uid, afterSeq: after, limit: 100 } })).messages;
      if (state.thread?.root.uid !== root.uid) return;
      const replies = page.messages || [];
      state.thread.replies.push(...replies);
      if (!page.moreAvailable || !replies.length) break;
      after = replies[replies.length - 1].seq;
    }
    renderThread();
    $("thread-text").focus();
  } catch (err) { showError("view-error", err); }
}

export function renderThread() {
  const t = state.thread;
  if (!t) return;
  $("thread-root").replaceChildren(renderMessage(t.root, true, true));
  $("thread-list").replaceChildren(...t.replies.map((m) => renderMessage(m, true, true)));
  $("thread-list").scrollTop = $("thread-list").scrollHeight;
}

/** A message of the open channel: a reply of the open thread joins it; a root counts its replies. */
export function threadMessage(m) {
  const t = state.thread;
  if (t && Number(m.threadRoot || 0) && m.threadRoot === t.root.uid && !t.replies.some((x) => x.uid === m.uid)) {
    t.replies.push(m);
    renderThread();
  }
}

export function closeThread() {
  state.thread = null;
  $("thread").hidden = true;
}

export function wireThread() {
  $("thread-close").addEventListener("click", () => closeThread());
  $("thread-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const t = state.thread, text = $("thread-text").value;
    if (!t || !text.trim()) return;
    $("thread-text").value = "";
    try {
      const r = await gh.request({ sendMessage: { channelId: t.channelId, body: { text }, threadRoot: t.root.uid, clientId: crypto.randomUUID() } });
      addMessage(r.message);
    } catch (err) { showError("view-error", err); }
  });
}
