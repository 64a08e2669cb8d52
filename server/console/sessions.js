// The sessions of every application, newest first, filtered by status, tool and creation time
// (GET /v1/console/sessions). The filter lives in the page's address, so it survives a reload
// and the back button; the list refreshes itself every few seconds.
import { getJson } from "./api.js";
import { badge, dateTime, h, replace } from "./dom.js";
import { sessionLink } from "./records.js";
import { errorRow, refreshEvery, table } from "./tables.js";

/** Time filters, as the offset from now they start at. */
const SINCE = { "": null, "15m": 15 * 60_000, "1h": 3_600_000, "24h": 86_400_000, "7d": 7 * 86_400_000 };
const LIMIT = 50;

/**
 * @param {HTMLElement} view
 * @param {URLSearchParams} params the filter: status, tool, since (a key of SINCE), until (ISO)
 */
export function mountSessions(view, params) {
  const status = params.get("status") ?? "";
  const tool = params.get("tool") ?? "";
  const since = Object.hasOwn(SINCE, params.get("since") ?? "") ? (params.get("since") ?? "") : "";
  const until = params.get("until") ?? "";

  const form = /** @type {HTMLFormElement} */ (
    h(
      "form",
      { id: "session-filter", class: "filters" },
      h(
        "label",
        {},
        "Status ",
        h(
          "select",
          { name: "status" },
          ["", "active", "ended"].map((v) => h("option", { value: v, selected: v === status }, v || "any")),
        ),
      ),
      h(
        "label",
        {},
        "Tool ",
        h("input", {
          name: "tool",
          value: tool,
          placeholder: "any",
          size: 16,
          autocomplete: "off",
          // Tool names as the API takes them (TOOL_NAME_PATTERN): a typo is caught before the request.
          pattern: "[a-zA-Z][a-zA-Z0-9_\\-]{0,63}",
        }),
      ),
      h(
        "label",
        {},
        "Created ",
        h(
          "select",
          { name: "since" },
          Object.keys(SINCE).map((v) => h("option", { value: v, selected: v === since }, v ? `last ${v}` : "any time")),
        ),
      ),
      h("button", { type: "submit" }, "Apply"),
    )
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const next = new URLSearchParams();
    for (const key of ["status", "tool", "since"]) {
      const value = String(data.get(key) ?? "").trim();
      if (value) next.set(key, value);
    }
    location.hash = `#/sessions${next.size > 0 ? `?${next}` : ""}`;
  });

  const body = h("tbody", {});
  const more = h("p", { class: "more" });
  replace(
    view,
    h("h1", {}, "Sessions"),
    form,
    table(
      "sessions",
      ["Session", "Status", "Tools", "Application", "Open calls", "Records", "Created", "Last record"],
      body,
    ),
    more,
  );

  const load = async (signal) => {
    const query = new URLSearchParams({ limit: String(LIMIT) });
    if (status) query.set("status", status);
    if (tool) query.set("tool", tool);
    const offset = SINCE[since];
    if (offset) query.set("since", new Date(Date.now() - offset).toISOString());
    if (until) query.set("until", until);
    try {
      const { sessions } = await getJson(`/v1/console/sessions?${query}`, signal);
      replace(
        body,
        sessions.length === 0
          ? h("tr", { class: "empty" }, h("td", { colspan: 8 }, "No sessions match."))
          : sessions.map((s) =>
              h(
                "tr",
                { dataset: { sessionId: s.id } },
                h("td", {}, sessionLink(s.id)),
                h("td", {}, badge(s.status, s.status)),
                h("td", { class: "tools" }, s.tools.join(", ")),
                h("td", {}, s.application ?? "operator"),
                h("td", { class: s.openCalls > 0 ? "num open" : "num" }, String(s.openCalls)),
                h("td", { class: "num" }, String(s.lastSequence)),
                h("td", {}, dateTime(s.createdAt)),
                h("td", {}, dateTime(s.lastRecordAt)),
              ),
            ),
      );
      const older = new URLSearchParams(params);
      // createdAt is to the millisecond, the database to the microsecond: the next page starts
      // within the last row's millisecond (it may show that row again, never skip a session).
      if (sessions.length === LIMIT)
        older.set("until", new Date(Date.parse(sessions[sessions.length - 1].createdAt) + 1).toISOString());
      replace(
        more,
        until ? h("a", { href: `#/sessions?${withoutUntil(params)}` }, "← newest") : null,
        until && sessions.length === LIMIT ? " · " : null,
        sessions.length === LIMIT ? h("a", { href: `#/sessions?${older}` }, "older →") : null,
      );
    } catch (error) {
      if (!signal.aborted) replace(body, errorRow(error, 8));
    }
  };
  return refreshEvery(5000, load);
}

function withoutUntil(params) {
  const copy = new URLSearchParams(params);
  copy.delete("until");
  return copy;
}
