// What the list views share: a table, an error row, and a refresh loop that never overlaps itself
// and stops when the view goes away.
import { h } from "./dom.js";

/** @param {string} id @param {string[]} headers @param {HTMLElement} body */
export function table(id, headers, body) {
  return h(
    "table",
    { id, class: "list" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        headers.map((name) => h("th", { scope: "col" }, name)),
      ),
    ),
    body,
  );
}

/** A row saying why the list could not be read. */
export function errorRow(error, columns) {
  const message = error instanceof Error ? error.message : String(error);
  return h("tr", { class: "error" }, h("td", { colspan: columns }, `Could not load: ${message}`));
}

/**
 * Runs `load` now and again `ms` after each run ends, until the returned function is called.
 * @param {number} ms
 * @param {(signal: AbortSignal) => Promise<void>} load
 * @returns {() => void}
 */
export function refreshEvery(ms, load) {
  const abort = new AbortController();
  let timer;
  const tick = async () => {
    await load(abort.signal);
    if (!abort.signal.aborted) timer = setTimeout(tick, ms);
  };
  void tick();
  return () => {
    abort.abort();
    clearTimeout(timer);
  };
}
