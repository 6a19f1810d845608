// Reactions: the emoji picker (a grid moved through with the arrow keys),
// adding and taking back one's reaction, and who reacted, named in a
// reaction's tooltip on hover or focus.

import { EMOJI, emojiOf } from "./messages.js";
import { $, el, gh, nameOf, showError } from "./page.js";
import { addMessage, viewChannelId } from "./view.js";

let returnTo = null;

/** Opens the picker by `anchor` for a reaction to `m`. */
export function pickReaction(m, anchor) {
  const picker = $("emoji-picker");
  returnTo = anchor;
  picker.replaceChildren(...EMOJI.map((emoji, i) => el("button", {
    type: "button", class: "emoji", "aria-label": `react with ${emoji}`, dataset: { type: i + 1 },
    onclick: () => { closePicker(); react(m, i + 1); },
  }, emoji)));
  const r = anchor.getBoundingClientRect();
  picker.hidden = false;
  const w = picker.offsetWidth, h = picker.offsetHeight;
  picker.style.left = `${Math.max(4, Math.min(r.right - w, innerWidth - w - 4))}px`;
  picker.style.top = `${r.top - h - 4 > 0 ? r.top - h - 4 : Math.min(r.bottom + 4, innerHeight - h - 4)}px`;
  picker.querySelector("button").focus();
}

export function closePicker() {
  if ($("emoji-picker").hidden) return;
  $("emoji-picker").hidden = true;
  returnTo?.focus?.();
}

/** Adds one's reaction of `type`, or takes it back when one has it. */
export async function react(m, type) {
  const mine = (m.reactions || []).some((r) => r.type === type && r.mine);
  try {
    const r = await gh.request({ [mine ? "removeReaction" : "addReaction"]: { channelId: viewChannelId(), messageUid: m.uid, type } });
    if (r.message) addMessage(r.message);
  } catch (err) { showError("view-error", err); }
}

// What was asked already: "uid:type:count" -> the tooltip (a new count asks again).
const named = new Map();

/** Names who reacted with `type` (the first 20) in the reaction's tooltip. */
export async function showReactors(m, type, count, button) {
  const key = `${m.uid}:${type}:${count}`;
  if (named.has(key)) { button.title = named.get(key); return; }
  try {
    const r = (await gh.request({ listReactors: { channelId: viewChannelId(), messageUid: m.uid, type, limit: 20 } })).reactors;
    const ids = r.userIds || [], more = Number(r.total || ids.length) - ids.length;
    const text = `${emojiOf(type)} ${ids.map(nameOf).join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
    named.set(key, text);
    button.title = text;
    button.setAttribute("aria-description", text);
  } catch { /* the count still shows */ }
}

export function wireReactions() {
  const picker = $("emoji-picker");
  picker.addEventListener("keydown", (e) => {
    const buttons = [...picker.querySelectorAll("button")], at = buttons.indexOf(document.activeElement);
    const step = { ArrowRight: 1, ArrowLeft: -1, ArrowDown: 8, ArrowUp: -8 }[e.key];
    if (step !== undefined && at >= 0) { e.preventDefault(); buttons[(at + step + buttons.length) % buttons.length].focus(); }
    if (e.key === "Escape") { e.preventDefault(); closePicker(); }
  });
  document.addEventListener("mousedown", (e) => { if (!picker.hidden && !picker.contains(e.target)) closePicker(); });
}
