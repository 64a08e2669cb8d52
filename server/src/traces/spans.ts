import { createHash } from "node:crypto";
import type { TraceRecord } from "@aexhq/brain-db";
import {
  type Attributes,
  type HrTime,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
} from "@opentelemetry/api";
import type { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import type { Resource } from "@opentelemetry/resources";

/** The span shape OTLP serializers take (the SDK's ReadableSpan), built here from records. */
export type JournalSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number];

/** The record kinds whose record ends a span, and where their start's sequence is. */
const ENDS: Record<string, string> = {
  activation_ended: "activation",
  model_call_ended: "call",
  tool_call_ended: "call",
};

/** Records of a tool call that are not span events: its span's own start and end, model calls. */
const NOT_EVENTS = new Set(["tool_call_started", "tool_call_ended", "model_call_started", "model_call_ended"]);

/**
 * Trace and span ids are hashes of (session, sequence): a trace per activation (a turn, or a
 * round of background results), named by the seq of its activation_started; a span per start
 * record. Whichever server builds a span, whenever, after any fail-over, its ids are the same.
 */
export function traceIdOf(sessionId: string, activationSeq: number): string {
  return digest(`brain.trace:${sessionId}:${activationSeq}`, 16);
}

export function spanIdOf(sessionId: string, seq: number): string {
  return digest(`brain.span:${sessionId}:${seq}`, 8);
}

function digest(text: string, bytes: number): string {
  return createHash("sha256")
    .update(text)
    .digest("hex")
    .slice(0, bytes * 2);
}

/** The sequences of the start records that end records in `page` need. */
export function startsNeeded(page: TraceRecord[]): number[] {
  return page.flatMap((r) => {
    const field = ENDS[r.kind];
    const seq = field ? Number(r.payload[field]) : Number.NaN;
    return Number.isSafeInteger(seq) ? [seq] : [];
  });
}

/** The tool calls whose span ends in `page` (their events are read with their starts). */
export function toolCallsEnding(page: TraceRecord[]): number[] {
  return page.filter((r) => r.kind === "tool_call_ended").map((r) => Number(r.payload.call));
}

export interface SpanSource {
  sessionId: string;
  /** The records read past the cursor, in order. */
  page: TraceRecord[];
  /** page and what it needs from before: starts, session_created (seq 1), tool calls' events. */
  known: ReadonlyMap<number, TraceRecord>;
  resource: Resource;
  /** For observation records that woke an activation: the tool call behind each. */
  observed?: ReadonlyMap<number, { call: number; activation: number }>;
  /** When the page holds session_ended: the starts it left without an end. */
  openAtEnd?: TraceRecord[];
}

const SCOPE = { name: "brain.journal", version: "1" };

/** One span per end record in the page whose start is known (a start alone is still running). */
export function spansOf(src: SpanSource): JournalSpan[] {
  const created = src.known.get(1)?.payload.model as { provider?: unknown; name?: unknown } | undefined;
  const model = {
    provider: typeof created?.provider === "string" ? created.provider : undefined,
    name: typeof created?.name === "string" ? created.name : undefined,
  };
  const spans: JournalSpan[] = [];
  for (const { start, end } of pairs(src)) {
    const common: Attributes = { "gen_ai.conversation.id": src.sessionId, "brain.sequence": start.seq };
    if (model.provider) common["gen_ai.provider.name"] = model.provider;
    if (model.name) common["gen_ai.request.model"] = model.name;
    const base = { sessionId: src.sessionId, start, end, resource: src.resource };
    if (end.kind === "activation_ended") spans.push(invokeAgent(base, common, src.observed));
    else if (end.kind === "model_call_ended") spans.push(chat(base, common, model.name));
    else spans.push(executeTool(base, common, src.known));
  }
  return spans;
}

/** What ends a start that the session's end left open (the end record's kind and payload). */
const CLOSED_BY_SESSION_END: Record<string, (seq: number) => { kind: string; payload: Record<string, unknown> }> = {
  activation_started: (seq) => ({ kind: "activation_ended", payload: { activation: seq, status: "session_ended" } }),
  model_call_started: (seq) => ({
    kind: "model_call_ended",
    payload: { call: seq, outcome: { status: "unknown", error: { code: "session_ended" } } },
  }),
  tool_call_started: (seq) => ({
    kind: "tool_call_ended",
    payload: { call: seq, outcome: { status: "cancelled", error: { code: "session_ended" } } },
  }),
};

/** Each span's start and end: end records in the page, and what a session_ended in it closed. */
function pairs(src: SpanSource): { start: TraceRecord; end: TraceRecord }[] {
  const out: { start: TraceRecord; end: TraceRecord }[] = [];
  for (const end of src.page) {
    const field = ENDS[end.kind];
    const start = field ? src.known.get(Number(end.payload[field])) : undefined;
    if (start) out.push({ start, end });
    if (end.kind !== "session_ended") continue;
    for (const open of src.openAtEnd ?? []) {
      const close = CLOSED_BY_SESSION_END[open.kind];
      if (close && open.seq < end.seq) out.push({ start: open, end: { ...end, ...close(open.seq) } });
    }
  }
  return out;
}

interface Base {
  sessionId: string;
  start: TraceRecord;
  end: TraceRecord;
  resource: Resource;
}

/** The observation records an activation_started names (what woke it). */
export function observationsOf(start: TraceRecord): number[] {
  const o = start.payload.observations;
  return Array.isArray(o) ? o.filter((x): x is number => Number.isSafeInteger(x)) : [];
}

function invokeAgent(b: Base, common: Attributes, observed: SpanSource["observed"]): JournalSpan {
  const p = b.end.payload;
  // An activation woken by background results links to the tool calls that produced them, which
  // live in the traces of earlier activations: the chain across suspension stays navigable.
  const calls = new Map<number, number>();
  for (const seq of observationsOf(b.start)) {
    const o = observed?.get(seq);
    if (o) calls.set(o.call, o.activation);
  }
  const links = [...calls].map(([call, activation]) => ({
    context: {
      traceId: traceIdOf(b.sessionId, activation),
      spanId: spanIdOf(b.sessionId, call),
      traceFlags: TraceFlags.SAMPLED,
    },
    attributes: { "brain.link": "observation" },
    droppedAttributesCount: 0,
  }));
  const attributes: Attributes = {
    ...common,
    "gen_ai.operation.name": "invoke_agent",
    "brain.activation.cause": String(b.start.payload.cause ?? ""),
    "brain.activation.status": String(p.status ?? ""),
  };
  const error =
    p.status === "failed"
      ? errorCode(p.error)
      : p.status === "cancelled" || p.status === "session_ended"
        ? String(p.status)
        : undefined;
  return span(b, {
    name: "invoke_agent",
    kind: SpanKind.INTERNAL,
    traceId: traceIdOf(b.sessionId, b.start.seq),
    parent: undefined,
    attributes,
    error,
    links,
  });
}

function chat(b: Base, common: Attributes, requested: string | undefined): JournalSpan {
  const p = b.end.payload;
  const origin = b.start.payload.origin as { type?: string; sequence?: number } | undefined;
  const activation = Number(b.start.payload.activation);
  const response = p.response as { stopReason?: unknown } | undefined;
  const usage = p.usage as { inputTokens?: unknown; outputTokens?: unknown } | undefined;
  const attributes: Attributes = { ...common, "gen_ai.operation.name": "chat", "brain.model_call.origin": "agentloop" };
  if (typeof p.model === "string") {
    attributes["gen_ai.response.model"] = p.model;
    attributes["gen_ai.request.model"] ??= p.model;
  }
  if (typeof usage?.inputTokens === "number") attributes["gen_ai.usage.input_tokens"] = usage.inputTokens;
  if (typeof usage?.outputTokens === "number") attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
  if (typeof response?.stopReason === "string") attributes["gen_ai.response.finish_reasons"] = [response.stopReason];
  // A tool's own model call belongs to the tool: it is a child of the tool call's span.
  let parent = spanIdOf(b.sessionId, activation);
  if (origin?.type === "tool" && Number.isSafeInteger(origin.sequence)) {
    parent = spanIdOf(b.sessionId, Number(origin.sequence));
    attributes["brain.model_call.origin"] = "tool";
  }
  const model = requested ?? (typeof p.model === "string" ? p.model : undefined);
  return span(b, {
    name: model ? `chat ${model}` : "chat",
    kind: SpanKind.CLIENT,
    traceId: traceIdOf(b.sessionId, activation),
    parent,
    attributes,
    error: outcomeError(p.outcome),
  });
}

function executeTool(b: Base, common: Attributes, known: ReadonlyMap<number, TraceRecord>): JournalSpan {
  const s = b.start.payload;
  // A call an MCP client started belongs to no activation: it is the root of a trace of its own,
  // named by its own sequence (the unit its tools' model calls are charged to, too).
  const own = typeof s.activation !== "number";
  const activation = own ? b.start.seq : Number(s.activation);
  const tool = String(s.tool ?? "");
  const outcome = b.end.payload.outcome as { status?: unknown } | undefined;
  const attributes: Attributes = {
    ...common,
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": tool,
    "gen_ai.tool.type": "function",
    "brain.tool_call.status": String(outcome?.status ?? ""),
  };
  if (typeof s.callId === "string") attributes["gen_ai.tool.call.id"] = s.callId;
  const events = [...known.values()]
    .filter(
      (r) =>
        r.seq > b.start.seq && r.seq < b.end.seq && Number(r.payload.call) === b.start.seq && !NOT_EVENTS.has(r.kind),
    )
    .sort((x, y) => x.seq - y.seq)
    .map((r) => ({
      name: r.kind,
      time: hrTime(r.atMicros),
      attributes: eventAttributes(r),
      droppedAttributesCount: 0,
    }));
  return span(b, {
    name: `execute_tool ${tool}`,
    kind: SpanKind.INTERNAL,
    traceId: traceIdOf(b.sessionId, activation),
    parent: own ? undefined : spanIdOf(b.sessionId, activation),
    attributes,
    error: outcomeError(outcome),
    events,
  });
}

/** What a span event says of its record: its sequence and status, never the data (content). */
function eventAttributes(r: TraceRecord): Attributes {
  const a: Attributes = { "brain.sequence": r.seq };
  const outcome = r.payload.outcome as { status?: unknown } | undefined;
  if (typeof outcome?.status === "string") a["brain.outcome.status"] = outcome.status;
  if (typeof r.payload.code === "string") a["brain.code"] = r.payload.code;
  return a;
}

function outcomeError(outcome: unknown): string | undefined {
  const o = outcome as { status?: unknown; error?: unknown } | undefined;
  if (!o || o.status === "ok") return undefined;
  return errorCode(o.error) ?? String(o.status ?? "error");
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

interface SpanShape {
  name: string;
  kind: SpanKind;
  traceId: string;
  parent: string | undefined;
  attributes: Attributes;
  error: string | undefined;
  events?: JournalSpan["events"];
  links?: JournalSpan["links"];
}

function span(b: Base, s: SpanShape): JournalSpan {
  const ctx: SpanContext = {
    traceId: s.traceId,
    spanId: spanIdOf(b.sessionId, b.start.seq),
    traceFlags: TraceFlags.SAMPLED,
  };
  const parentSpanContext: SpanContext | undefined = s.parent
    ? { traceId: s.traceId, spanId: s.parent, traceFlags: TraceFlags.SAMPLED }
    : undefined;
  if (s.error) s.attributes["error.type"] = s.error;
  const startTime = hrTime(b.start.atMicros);
  const endTime = hrTime(Math.max(b.end.atMicros, b.start.atMicros));
  return {
    name: s.name,
    kind: s.kind,
    spanContext: () => ctx,
    parentSpanContext,
    startTime,
    endTime,
    duration: hrTime(Math.max(0, b.end.atMicros - b.start.atMicros)),
    status: s.error ? { code: SpanStatusCode.ERROR, message: s.error } : { code: SpanStatusCode.UNSET },
    attributes: s.attributes,
    links: s.links ?? [],
    events: s.events ?? [],
    ended: true,
    resource: b.resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

function hrTime(micros: number): HrTime {
  const seconds = Math.floor(micros / 1_000_000);
  return [seconds, (micros - seconds * 1_000_000) * 1000];
}
