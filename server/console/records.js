// How each journal record reads in a session's timeline: a label and a summary built from its
// payload. Every payload value is shown as text (see dom.js); none is trusted to have the shape
// docs/sql.md documents, so a missing or odd field shows as nothing rather than breaking the page.
import { badge, brief, duration, h, shortId } from "./dom.js";

/** @typedef {{ sequence: number, kind: string, payload: any, createdAt: string }} JournalEvent */

export const RECORD_LABELS = {
  session_created: "session created",
  user_message: "user",
  activation_started: "activation",
  model_call_started: "model call",
  model_call_ended: "model call ended",
  assistant_message: "assistant",
  activation_ended: "activation ended",
  tool_call_started: "tool call",
  tool_result: "tool result",
  tool_returned: "tool returned",
  tool_call_ended: "tool call ended",
  approval_checked: "approval check",
  approval_decided: "approval",
  emission_rejected: "emission rejected",
  environment_operation: "environment",
  cancel_requested: "cancel requested",
  session_ended: "session ended",
};

/** Whether a kind is one of the journal's own (the rest are tools' extension events). */
export function isRecordKind(kind) {
  return Object.hasOwn(RECORD_LABELS, kind);
}

export function labelOf(kind) {
  return isRecordKind(kind) ? RECORD_LABELS[kind] : "event";
}

const text = (value) => (typeof value === "string" ? value : value === undefined || value === null ? "" : brief(value));
const obj = (value) => (value !== null && typeof value === "object" && !Array.isArray(value) ? value : {});

/** The milliseconds of a wake window (`{ openedAt, firedAt }`, epoch ms), or null. */
export function wakeMs(wake) {
  const w = obj(wake);
  const ms = Number(w.firedAt) - Number(w.openedAt);
  return Number.isFinite(ms) ? ms : null;
}

function wakeNote(wake) {
  const ms = wakeMs(wake);
  return ms === null
    ? null
    : h("span", { class: "wake", title: "the wake window that led to it" }, `wake window ${duration(ms)}`);
}

function outcomeBadge(outcome) {
  const status = text(obj(outcome).status) || "?";
  return badge(status, status);
}

function errorNote(outcome) {
  const error = obj(obj(outcome).error);
  if (!error.code && !error.message) return null;
  return h("span", { class: "error-code" }, [text(error.code), error.message ? `: ${text(error.message)}` : ""]);
}

const callRef = (call, tool) =>
  h("span", { class: "call-ref" }, `call #${text(call)}`, tool ? h("span", { class: "tool-name" }, ` ${tool}`) : null);

/** A message's text, clipped for the row (the whole payload is in the record's details). */
const messageText = (value) => h("span", { class: "message-text" }, brief(text(value), 2000));

/**
 * The summary of one record. `context` names the tools of calls by sequence (for results and
 * extension events) and receives the parts of a call or model call row that later records update.
 * @param {JournalEvent} event
 * @param {{ toolOf: (call: unknown) => string | undefined }} context
 */
export function summarize(event, context) {
  const p = obj(event.payload);
  switch (event.kind) {
    case "session_created": {
      const model = obj(p.model);
      const tools = Array.isArray(p.tools) ? p.tools.map((t) => text(obj(t).name)).join(", ") : "";
      return [
        h("span", {}, `model ${text(model.provider)}${model.name ? ` ${text(model.name)}` : ""}`),
        tools ? h("span", {}, ` · tools: ${tools}`) : null,
      ];
    }
    case "user_message":
    case "assistant_message":
      return [messageText(p.text)];
    case "activation_started":
      return [h("span", {}, `started by ${text(p.cause)}`), " ", wakeNote(p.wake)];
    case "model_call_started": {
      const origin = obj(p.origin);
      const who = origin.type === "tool" ? `for tool call #${text(origin.sequence)}` : "Agentloop";
      return [
        h("span", { class: "origin" }, who),
        p.activation !== undefined ? ` · activation #${text(p.activation)}` : "",
        " ",
        wakeNote(p.wake),
        " ",
        badge("running", "running"),
        h("span", { class: "tokens" }),
        h("span", { class: "model-duration duration" }),
      ];
    }
    case "model_call_ended": {
      const response = obj(p.response);
      const calls = Array.isArray(response.toolCalls) ? response.toolCalls.map((c) => text(obj(c).name)) : [];
      return [
        h("span", {}, `#${text(p.call)} `),
        outcomeBadge(p.outcome),
        p.model ? h("span", { class: "model-name" }, ` ${text(p.model)}`) : null,
        h("span", { class: "tokens" }, tokens(p.usage)),
        response.stopReason ? ` · stop: ${text(response.stopReason)}` : "",
        calls.length > 0 ? ` · asks for ${calls.join(", ")}` : "",
        response.text ? h("div", { class: "message-text" }, brief(text(response.text), 500)) : null,
        errorNote(p.outcome),
      ];
    }
    case "activation_ended":
      return [
        badge(text(p.status) || "?", text(p.status)),
        p.text ? h("span", { class: "message-text" }, ` ${brief(text(p.text), 500)}`) : "",
        p.error
          ? h("span", { class: "error-code" }, ` ${text(obj(p.error).code)}: ${text(obj(p.error).message)}`)
          : null,
      ];
    case "tool_call_started":
      return [
        h("strong", { class: "tool-name" }, text(p.tool)),
        h("span", { class: "input" }, ` ${brief(p.input, 200)}`),
        " ",
        badge("pending", "pending"),
        h("span", { class: "call-duration duration" }),
        h("span", { class: "call-events" }),
        h("span", { class: "call-progress", title: "the last event it emitted" }),
        p.deadline ? h("span", { class: "deadline" }, ` · deadline ${new Date(Number(p.deadline)).toISOString()}`) : "",
      ];
    case "tool_result":
      return [
        callRef(p.call, context.toolOf(p.call)),
        " ",
        outcomeBadge(p.outcome),
        " ",
        h("span", { class: "value" }, brief(obj(p.outcome).value ?? obj(p.outcome).error ?? "", 300)),
      ];
    case "tool_returned":
      return [callRef(p.call, context.toolOf(p.call)), " returned (synchronous phase over)"];
    case "tool_call_ended":
      return [
        callRef(p.call, context.toolOf(p.call)),
        " ",
        outcomeBadge(p.outcome),
        " ",
        errorNote(p.outcome),
        h("span", { class: "call-duration duration" }),
      ];
    case "approval_checked":
      return [
        callRef(p.call, context.toolOf(p.call)),
        p.required ? " held for a person by its predicate" : " allowed by its predicate",
      ];
    case "approval_decided":
      return [
        callRef(p.call, context.toolOf(p.call)),
        ` ${text(p.decision)} by ${text(p.by)}`,
        p.reason === undefined ? "" : ` · ${text(p.reason)}`,
        p.input === undefined ? "" : h("span", { class: "value" }, ` with input ${brief(p.input, 300)}`),
      ];
    case "emission_rejected":
      return [
        callRef(p.call, context.toolOf(p.call)),
        ` · ${text(p.kind)} (${text(p.bytes)} bytes) refused: `,
        h("span", { class: "error-code" }, text(p.code)),
      ];
    case "environment_operation":
      return [
        callRef(p.call, context.toolOf(p.call)),
        ` · ${text(p.operation)} ${text(p.name)} `,
        outcomeBadge(p.outcome),
        " ",
        errorNote(p.outcome),
      ];
    case "cancel_requested":
      return [`by ${text(p.by)}`];
    case "session_ended":
      return [text(p.reason)];
    default:
      // An extension event (ctx.emit): its kind is the tool's own word.
      return [
        h("span", { class: "event-kind" }, event.kind),
        p.call !== undefined ? [" from ", callRef(p.call, context.toolOf(p.call))] : null,
        h("span", { class: "event-data" }, ` ${brief(p.data, 300)}`),
      ];
  }
}

/** `usage` ({ inputTokens, outputTokens }) as text. */
export function tokens(usage) {
  const u = obj(usage);
  if (u.inputTokens === undefined && u.outputTokens === undefined) return "";
  return ` · ${Number(u.inputTokens) || 0} in / ${Number(u.outputTokens) || 0} out tokens`;
}

/** A session's id as a short link to its timeline. */
export function sessionLink(id) {
  return h("a", { href: `#/sessions/${encodeURIComponent(id)}`, class: "session-link" }, shortId(id));
}
