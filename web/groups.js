// Group conversations: making one from picked people, and the open group's
// panel (its members, rename, add, remove and leave, as its owner allows).

import { closeView, conversationName, renderConversations } from "./lists.js";
import { $, el, gh, nameOf, showError, state, userList } from "./page.js";
import { findPeople } from "./people.js";
import { attachPicker } from "./picker.js";
import { openView } from "./view.js";

/** The open group's panel: its members (the owner may remove them), rename and add where allowed, and leave. */
export function renderGroup() {
  const c = state.view?.kind === "dm" ? state.conversations.get(state.view.conversationId) : null;
  $("group").hidden = !c?.isGroup;
  if (!c?.isGroup) return;
  const owner = c.ownerId === state.me;
  $("group-title").textContent = c.name;
  $("group-rename-form").hidden = !owner;
  if (document.activeElement !== $("group-rename")) $("group-rename").value = c.name;
  $("group-add-form").hidden = !(owner || c.membersMayAdd);
  $("group-members").replaceChildren(...(c.memberIds || []).map((user) => el("li", { class: "group-member", dataset: { user } },
    el("span", { class: "name" }, nameOf(user)), user === c.ownerId ? el("span", { class: "muted" }, " owner") : null,
    owner && user !== state.me
      ? el("button", { type: "button", class: "group-remove", "aria-label": `remove ${nameOf(user)} from the group`,
                       onclick: () => groupChange({ removeGroupMember: { conversationId: c.conversationId, userId: user } }) }, "Remove")
      : null)));
}

/** Sends a change to the open group; the group as it is then replaces the one shown. */
export async function groupChange(request) {
  try {
    const r = await gh.request(request);
    if (r.conversation) state.conversations.set(r.conversation.conversationId, r.conversation);
    renderConversations();
    if (state.view?.kind === "dm" && r.conversation?.conversationId === state.view.conversationId) {
      $("view-title").textContent = conversationName(r.conversation);
    }
  } catch (err) { showError("view-error", err); }
}

/** The people chosen for a new group, each with a button to take them out. */
function renderChosen() {
  $("group-create-chosen").replaceChildren(...state.groupChosen.map((user, i) => el("li", { dataset: { user } }, nameOf(user),
    el("button", { type: "button", "aria-label": `take ${nameOf(user)} out`, onclick: () => { state.groupChosen.splice(i, 1); renderChosen(); } }, "×"))));
}

/** Hooks the group controls to the page. */
export function wireGroups() {
  $("group-create-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      const typed = userList($("group-create-users").value);
      const r = await gh.request({ createGroup: { name: $("group-create-name").value.trim(), userIds: [...new Set([...state.groupChosen, ...typed])] } });
      $("group-create-name").value = "";
      $("group-create-users").value = "";
      state.groupChosen = [];
      renderChosen();
      $("group-create-box").open = false;
      state.conversations.set(r.conversation.conversationId, r.conversation);
      await openView({ kind: "dm", conversationId: r.conversation.conversationId, peerId: "" });
    } catch (err) { showError("view-error", err); }
  });
  $("group-rename-form").addEventListener("submit", (e) => {
    e.preventDefault();
    groupChange({ updateGroup: { conversationId: state.view.conversationId, name: $("group-rename").value.trim() } });
  });
  $("group-add-form").addEventListener("submit", (e) => {
    e.preventDefault();
    groupChange({ addGroupMembers: { conversationId: state.view.conversationId, userIds: userList($("group-add-users").value) } });
    $("group-add-users").value = "";
  });
  $("group-leave").addEventListener("click", async () => {
    const id = state.view?.conversationId;
    if (!id || !confirm("Leave this group? You will no longer see it.")) return;
    try {
      await gh.request({ leaveGroup: { conversationId: id } });
      state.conversations.delete(id);
      closeView();
      renderConversations();
    } catch (err) { showError("view-error", err); }
  });
  // Someone found by name joins the open group at once; ids typed (comma separated) join with Add.
  attachPicker($("group-add-users"), $("group-add-suggestions"), {
    suggest: (text) => findPeople(text, new Set(state.conversations.get(state.view?.conversationId)?.memberIds || [])),
    choose: (item) => {
      $("group-add-users").value = "";
      groupChange({ addGroupMembers: { conversationId: state.view.conversationId, userIds: [item.key] } });
    },
  });
  attachPicker($("group-create-users"), $("group-suggestions"), {
    suggest: (text) => findPeople(text, new Set(state.groupChosen)),
    choose: (item) => { state.groupChosen.push(item.key); $("group-create-users").value = ""; renderChosen(); $("group-create-users").focus(); },
  });
}
