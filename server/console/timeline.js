// One session's timeline: its journal from the first record, then live. Records arrive through
// the event stream (GET /v1/sessions/:id/events?follow=true); a broken stream is resumed after
// the last record shown, so nothing is missed or shown twice (sequences are dense per session).
import { ApiError, followEvents, getJson } from "./api.js";
import { approvalControls } from "./approvals.js";
import { badge, between, brief, clock, dateTime, duration, h, pretty, replace } from "./dom.js";
import { forkButton } from "./fork.js";
import { isRecordKind, labelOf, summarize, tokens } from "./records.js";

/** @typedef {import("./records.js").JournalEvent} JournalEvent */

/**
 * @param {HTMLElement} view
 * @param {string} sessionId
 * @returns {() => void} stops the stream
 */
export function mountTimeline(view, sessionId) {
  const abort = new AbortController();
  const live = h("span", { id: "live", class: "live" }, "connecting…");
  const status = h("span", { id: "session-status" });
  const stats = h("dl", { id: "session-stats", class: "stats" });
  const list = h("ol", { id: "timeline", class: "timeline" });
  const info = h("div", { class: "session-info" });
  replace(
    view,
    h("p", { class: "crumbs" }, h("a", { href: "#/sessions" }, "Sessions"), " / ", h("code", {}, sessionId)),
    h("h1", {}, "Session ", h("code", {}, sessionId.slice(0, 8)), " ", status, " ", live),
    info,
    stats,
    list,
  );

  /** @type {Map<number, { tool: string, el: HTMLElement, startedAt: string, events: number }>} */
  const calls = new Map();
  /** @type {Map<number, { el: HTMLElement, startedAt: string }>} */
  const models = new Map();
  const totals = { records: 0, modelCalls: 0, inputTokens: 0, outputTokens: 0, toolCalls: 0, openCalls: 0, events: 0 };
  let last = 0;
  let previousAt = null;
  let ended = false;
  const context = { toolOf: (call) => calls.get(Number(call))?.tool };

  // Redrawn once per frame at most: a long backlog arrives hundreds of records at a time.
  let statsQueued = false;
  const queueStats = () => {
    if (statsQueued) return;
    statsQueued = true;
    requestAnimationFrame(() => {
      statsQueued = false;
      showStats();
    });
  };
  const showStats = () =>
    replace(
      stats,
      ...[
        ["records", totals.records],
        ["model calls", totals.modelCalls],
        ["tokens in", totals.inputTokens],
        ["tokens out", totals.outputTokens],
        ["tool calls", totals.toolCalls],
        ["open calls", totals.openCalls],
        ["events", totals.events],
      ].map(([name, value]) => h("div", { dataset: { stat: name } }, h("dt", {}, name), h("dd", {}, String(value)))),
    );

  /** @param {JournalEvent} event */
  const add = (event) => {
    const seq = Number(event.sequence);
    if (!(seq > last)) return;
    last = seq;
    totals.records++;
    const gap = previousAt ? between(previousAt, event.createdAt) : null;
    previousAt = event.createdAt;
    const extension = !isRecordKind(event.kind);
    const el = h(
      "li",
      {
        class: `rec kind-${extension ? "extension" : event.kind}`,
        dataset: { seq: String(seq), kind: event.kind, ...(extension ? { extension: "true" } : {}) },
      },
      h("span", { class: "seq" }, `#${seq}`),
      h("span", { class: "time", title: dateTime(event.createdAt) }, clock(event.createdAt)),
      h("span", { class: "gap" }, gap === null ? "" : `+${duration(gap)}`),
      h("span", { class: "label" }, labelOf(event.kind)),
      h(
        "div",
        { class: "body" },
        h("div", { class: "summary" }, summarize(event, context)),
        payloadDetails(event.payload),
        forkButton(sessionId, seq),
      ),
    );
    follow(event, el);
    const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
    list.appendChild(el);
    if (atBottom && totals.records > 1) el.scrollIntoView({ block: "end" });
    queueStats();
  };

  /** Records that change an earlier row: a call's status and duration, a model call's tokens. */
  const follow = (event, el) => {
    const p = event.payload ?? {};
    const seq = Number(event.sequence);
    switch (event.kind) {
      case "model_call_started":
        totals.modelCalls++;
        models.set(seq, { el, startedAt: event.createdAt });
        return;
      case "model_call_ended": {
        totals.inputTokens += Number(p.usage?.inputTokens) || 0;
        totals.outputTokens += Number(p.usage?.outputTokens) || 0;
        const started = models.get(Number(p.call));
        if (!started) return;
        const status = String(p.outcome?.status ?? "?");
        started.el.querySelector(".badge")?.replaceWith(badge(status, status));
        setText(started.el, ".tokens", tokens(p.usage));
        setText(started.el, ".model-duration", ` · ${duration(between(started.startedAt, event.createdAt))}`);
        return;
      }
      case "tool_call_started":
        totals.toolCalls++;
        totals.openCalls++;
        calls.set(seq, { tool: String(p.tool ?? ""), el, startedAt: event.createdAt, events: 0 });
        el.dataset.call = String(seq);
        if (p.approval) el.querySelector(".body")?.appendChild(approvalControls(sessionId, seq));
        return;
      case "approval_checked": {
        // The tool's predicate held the call: the buttons go on the call's own row.
        const held = calls.get(Number(p.call));
        if (p.required && held && !held.el.querySelector(".approval")) {
          held.el.querySelector(".body")?.appendChild(approvalControls(sessionId, Number(p.call)));
        }
        return;
      }
      case "approval_decided":
        calls.get(Number(p.call))?.el.querySelector(".approval")?.remove();
        return;
      case "tool_result":
      case "tool_returned":
      case "tool_call_ended": {
        const call = calls.get(Number(p.call));
        if (!call) return;
        const took = ` · ${duration(between(call.startedAt, event.createdAt))}`;
        if (event.kind === "tool_call_ended") {
          call.el.querySelector(".approval")?.remove();
          totals.openCalls = Math.max(0, totals.openCalls - 1);
          const status = String(p.outcome?.status ?? "?");
          call.el.querySelector(".badge")?.replaceWith(badge(status, status));
          call.el.dataset.status = status;
          setText(call.el, ".call-duration", took);
          setText(el, ".call-duration", took);
        } else if (call.el.dataset.status === undefined) {
          const state = event.kind === "tool_result" ? "result" : "returned";
          call.el.querySelector(".badge")?.replaceWith(badge(state, "running"));
        }
        return;
      }
      case "session_ended":
        ended = true;
        replace(status, badge("ended", "ended"));
        return;
      default:
        if (!isRecordKind(event.kind)) {
          totals.events++;
          const call = calls.get(Number(p.call));
          if (call) {
            call.events++;
            setText(call.el, ".call-events", ` · ${call.events} event${call.events === 1 ? "" : "s"}`);
            // A running call's progress is what it emitted last.
            setText(call.el, ".call-progress", ` · last: ${event.kind} ${brief(p.data, 80)}`);
          }
        }
    }
  };

  const run = async () => {
    try {
      const session = await getJson(`/v1/sessions/${encodeURIComponent(sessionId)}`, abort.signal);
      replace(status, badge(session.status, session.status));
      replace(
        info,
        h("span", {}, `created ${dateTime(session.createdAt)}`),
        session.tools.length > 0 ? h("span", {}, ` · tools: ${session.tools.join(", ")}`) : null,
        session.hostId ? h("span", {}, " · host ", h("code", {}, session.hostId)) : null,
        Object.keys(session.metadata).length > 0
          ? h("span", {}, ` · metadata ${JSON.stringify(session.metadata)}`)
          : null,
      );
    } catch (error) {
      if (abort.signal.aborted) return;
      const message = error instanceof Error ? error.message : String(error);
      replace(live, error instanceof ApiError && error.code === "not_found" ? "no such session" : message);
      return;
    }
    let failures = 0;
    while (!abort.signal.aborted && !ended) {
      try {
        replace(live, badge("live", "live"));
        for await (const event of followEvents(sessionId, last, abort.signal)) {
          add(event);
          failures = 0;
        }
        // The server ends a followed stream only when the session ends (or is deleted).
        if (!ended) ended = true;
      } catch (error) {
        if (abort.signal.aborted) return;
        if (error instanceof ApiError && error.status !== 503) {
          replace(live, `stream closed: ${error.message}`);
          return;
        }
        failures++;
        replace(live, "reconnecting…");
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 250 * 2 ** failures)));
      }
    }
    if (ended && !abort.signal.aborted) replace(live, "journal complete");
  };
  showStats();
  void run();
  return () => abort.abort();
}

/** A record's whole payload, rendered when first opened (payloads can be large). */
function payloadDetails(payload) {
  const pre = h("pre", {});
  const details = h("details", {}, h("summary", {}, "payload"), pre);
  details.addEventListener("toggle", () => {
    if (details.hasAttribute("open") && !pre.firstChild) pre.textContent = pretty(payload);
  });
  return details;
}

function setText(root, selector, value) {
  const el = root.querySelector(selector);
  if (el) el.textContent = value;
}
