// The buttons of a call waiting at an approval gate: approve it as the model asked, or deny it
// with a reason. The decision goes through the API (journaled as approval_decided, by the
// operator); the timeline removes the buttons when the record arrives, whoever decided.
import { postJson } from "./api.js";
import { h } from "./dom.js";

/**
 * @param {string} sessionId
 * @param {number} call the sequence of its tool_call_started
 * @returns {HTMLElement}
 */
export function approvalControls(sessionId, call) {
  const note = h("span", { class: "approval-note" }, "waiting for approval");
  const reason = /** @type {HTMLInputElement} */ (
    h("input", { name: "reason", placeholder: "reason (for a denial)", class: "approval-reason" })
  );
  const decide = async (verb, body) => {
    for (const b of box.querySelectorAll("button")) b.disabled = true;
    note.textContent = verb === "approve" ? "approving…" : "denying…";
    try {
      await postJson(`/v1/sessions/${encodeURIComponent(sessionId)}/calls/${call}/${verb}`, body);
    } catch (error) {
      note.textContent = error instanceof Error ? error.message : String(error);
      for (const b of box.querySelectorAll("button")) b.disabled = false;
    }
  };
  const approve = h("button", { type: "button", class: "approve" }, "Approve");
  const deny = h("button", { type: "button", class: "deny" }, "Deny");
  approve.addEventListener("click", () => void decide("approve", {}));
  deny.addEventListener("click", () => {
    const text = reason.value.trim();
    void decide("deny", text === "" ? {} : { reason: text });
  });
  const box = h(
    "div",
    { class: "approval", dataset: { call: String(call) } },
    note,
    " ",
    approve,
    " ",
    deny,
    " ",
    reason,
  );
  return box;
}
