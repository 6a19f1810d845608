// A suggestion list under (or above) a text field, as a combobox: typing
// filters it, Up and Down move through it, Enter or Tab chooses, Escape
// closes it. Used to find people (direct and group conversations) and to
// mention members. Touches only the field and its list.

import { el } from "./page.js";

/**
 * `suggest(text, field)` answers (or promises) the items to show ({key, label, detail}), or none;
 * `choose(item, field)` is called with the one chosen.
 */
export function attachPicker(field, list, { suggest, choose }) {
  let items = [], at = 0;
  const close = () => { items = []; list.hidden = true; list.replaceChildren(); field.setAttribute("aria-expanded", "false"); field.removeAttribute("aria-activedescendant"); };
  const draw = () => {
    list.replaceChildren(...items.map((item, i) => el("li", {
      id: `${list.id}-${i}`, role: "option", "aria-selected": String(i === at), dataset: { key: item.key },
      onmousedown: (e) => { e.preventDefault(); pick(i); },
    }, el("span", { class: "label" }, item.label), item.detail ? el("span", { class: "who" }, item.detail) : null)));
    list.hidden = !items.length;
    field.setAttribute("aria-expanded", String(!!items.length));
    if (items.length) field.setAttribute("aria-activedescendant", `${list.id}-${at}`);
  };
  const pick = (i) => { const item = items[i]; close(); if (item) choose(item, field); };
  // `suggest` may answer later (a search on the server): an answer for text since changed is dropped,
  // and typing waits a moment before asking.
  let timer = null;
  const refresh = async () => {
    const text = field.value;
    const found = await suggest(text, field);
    if (field.value !== text) return;
    items = found || [];
    at = 0;
    draw();
  };
  field.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(refresh, 120); });
  field.addEventListener("focus", refresh);
  field.addEventListener("blur", () => setTimeout(close, 150));
  field.addEventListener("keydown", (e) => {
    if (list.hidden || !items.length) return;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      at = (at + (e.key === "ArrowDown" ? 1 : items.length - 1)) % items.length;
      draw();
    } else if (e.key === "Enter" || e.key === "Tab") {
      pick(at);
    } else if (e.key === "Escape") {
      close();
    } else {
      return;
    }
    // Handled here: neither the form nor the field's other keys see it.
    e.preventDefault();
    e.stopImmediatePropagation();
  });
  return { close, refresh };
}
