// "Fork here" on a record of the timeline: a new session whose journal is this one's up to that
// record (POST /v1/sessions/:id/fork), opened at once; the source is unchanged.
import { postJson } from "./api.js";
import { h } from "./dom.js";

/**
 * @param {string} sessionId
 * @param {number} seq
 * @returns {HTMLElement}
 */
export function forkButton(sessionId, seq) {
  const props = { type: "button", class: "fork", title: "A new session from the journal up to here" };
  const button = /** @type {HTMLButtonElement} */ (h("button", props, "fork here"));
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const fork = await postJson(`/v1/sessions/${encodeURIComponent(sessionId)}/fork`, { at: seq });
      location.hash = `#/sessions/${encodeURIComponent(fork.id)}`;
    } catch (error) {
      button.textContent = error instanceof Error ? error.message : String(error);
      button.disabled = false;
    }
  });
  return button;
}
