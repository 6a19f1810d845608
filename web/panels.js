// The side panels of a channel or server: pins, webhooks and search results.

import { operate } from "./messages.js";
import { $, el, gh, nameOf, showError, state } from "./page.js";
import { jumpTo } from "./view.js";

export async function showWebhooks() {
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
export async function showPins() {
  if (state.view?.kind !== "channel") return;
  const channelId = state.view.channelId;
  $("pins").hidden = false;
  try {
    const r = await gh.request({ listPins: { channelId } });
    if (state.view?.channelId !== channelId) return;
    const pins = r.pins.pins || [];
    $("pin-list").replaceChildren(...(pins.length ? pins.map((p) => el("li", { class: "pin", dataset: { uid: p.message.uid } },
      el("div", { class: "where muted" }, `${nameOf(p.message.senderId)} · pinned by ${nameOf(p.pinnedBy)}`),
      el("div", {}, p.message.body?.text ?? ""),
      el("button", { type: "button", class: "unpin-action", onclick: () => operate("unpinMessage", p.message).then(showPins) }, "Unpin"))) : [el("li", { class: "muted" }, "no pins")]));
  } catch (err) {
    $("pin-list").replaceChildren(el("li", { class: "error" }, `${err.code || "error"}: ${err.message || err}`));
  }
}

export async function search(words) {
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
        el("div", { class: "where muted" }, `# ${channel?.name || m.channelId} · ${nameOf(m.senderId)} · ${new Date(Number(m.sentTime || 0)).toLocaleString()}`),
        el("div", { class: "snippet" }, (h.snippet || []).map((part) => (part.match ? el("mark", {}, part.text) : part.text))),
        (m.attachments || []).length ? el("div", { class: "muted" }, m.attachments.map((a) => `📄 ${a.filename}`).join(" ")) : null);
    }) : [el("li", { class: "muted" }, "nothing found")]));
  } catch (err) {
    $("search-list").replaceChildren(el("li", { class: "error" }, `${err.code || "error"}: ${err.message || err}`));
  }
}

/** Hooks this module's controls to the page. */
export function wirePanels() {
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
  $("pins-close").addEventListener("click", () => { $("pins").hidden = true; });
}
