// Tool calls of every session (GET /v1/console/calls): those not ended, oldest first, so a stuck
// call is at the top; or, with "recent", the latest calls ended or not.
import { getJson } from "./api.js";
import { badge, dateTime, duration, h, replace, shortId } from "./dom.js";
import { sessionLink } from "./records.js";
import { errorRow, refreshEvery, table } from "./tables.js";

/** @param {HTMLElement} view @param {URLSearchParams} params */
export function mountCalls(view, params) {
  const recent = params.get("recent") === "1";
  const body = h("tbody", {});
  replace(
    view,
    h("h1", {}, recent ? "Recent calls" : "Open calls"),
    h(
      "p",
      { class: "filters" },
      recent
        ? h("a", { href: "#/calls" }, "Only open calls")
        : h("a", { href: "#/calls?recent=1" }, "Recent calls, ended too"),
    ),
    table("calls", ["Session", "Call", "Tool", "Status", "Outcome", "Runs on", "Started", "Elapsed", "Deadline"], body),
  );
  return refreshEvery(2000, async (signal) => {
    try {
      const { calls } = await getJson(`/v1/console/calls?open=${recent ? "false" : "true"}&limit=200`, signal);
      replace(
        body,
        calls.length === 0
          ? h("tr", { class: "empty" }, h("td", { colspan: 9 }, recent ? "No calls yet." : "No open calls."))
          : calls.map((c) =>
              h(
                "tr",
                { dataset: { sessionId: c.sessionId, call: String(c.sequence) } },
                h("td", {}, sessionLink(c.sessionId)),
                h("td", { class: "num" }, `#${c.sequence}`),
                h("td", { class: "tool-name" }, c.tool),
                h("td", {}, badge(c.status, c.status)),
                h("td", {}, c.outcome ? badge(c.outcome, c.outcome) : "", c.errorCode ? ` ${c.errorCode}` : ""),
                h("td", {}, c.executor, c.hostId ? [" ", shortId(c.hostId)] : null),
                h("td", {}, dateTime(c.startedAt)),
                h("td", { class: "num elapsed" }, duration(c.elapsedMs)),
                h("td", {}, c.deadlineAt ? dateTime(c.deadlineAt) : "none"),
              ),
            ),
      );
    } catch (error) {
      if (!signal.aborted) replace(body, errorRow(error, 9));
    }
  });
}
