import { createHash } from "node:crypto";
import { brainRecord, payloadOf, type RecordedOutcome } from "@aexhq/brain-contracts";
import type { TraceRecord } from "@aexhq/brain-db/ops";
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

/** The sequence of the record that started the span `r` ends, when `r` ends one. */
function startOf(r: TraceRecord): number | null {
  const b = brainRecord(r);
  if (b?.kind === "activation_ended") return b.payload.activation;
  if (b?.kind === "model_call_ended" || b?.kind === "tool_call_ended") return b.payload.call;
  return null;
}

/** The sequence of the tool call a record belongs to (a result, an emission), if any. */
function callOf(r: TraceRecord): number | null {
  const call = r.payload && typeof r.payload === "object" && "call" in r.payload ? r.payload.call : null;
  return typeof call === "number" ? call : null;
}

/** The sequences of the start records that end records in `page` need. */
export function startsNeeded(page: TraceRecord[]): number[] {
  return page.flatMap((r) => {
    const seq = startOf(r);
    return seq === null ? [] : [seq];
  });
}

/** The tool calls whose span ends in `page` (their events are read with their starts). */
export function toolCallsEnding(page: TraceRecord[]): number[] {
  return page.flatMap((r) => payloadOf(r, "tool_call_ended")?.call ?? []);
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
  const model = payloadOf(src.known.get(1), "session_created")?.model;
  const spans: JournalSpan[] = [];
  for (const { start, end, kind } of pairs(src)) {
    const common: Attributes = { "gen_ai.conversation.id": src.sessionId, "brain.sequence": start.seq };
    if (model?.provider) common["gen_ai.provider.name"] = model.provider;
    if (model?.name) common["gen_ai.request.model"] = model.name;
    const base = { sessionId: src.sessionId, start, end, resource: src.resource };
    if (kind === "activation_ended") spans.push(invokeAgent(base, common, src.observed));
    else if (kind === "model_call_ended") spans.push(chat(base, common, model?.name));
    else spans.push(executeTool(base, common, src.known));
  }
  return spans;
}

/** The end kind of each start kind: what a span is, and what a session's end stands in for. */
const END_OF: Record<string, string> = {
  activation_started: "activation_ended",
  model_call_started: "model_call_ended",
  tool_call_started: "tool_call_ended",
};

/**
 * Each span's start and end: end records in the page, and the starts a session_ended in it left
 * open, ended by it (the span's kind is its start's; `end` is then the session_ended record).
 */
function pairs(src: SpanSource): { start: TraceRecord; end: TraceRecord; kind: string }[] {
  const out: { start: TraceRecord; end: TraceRecord; kind: string }[] = [];
  for (const end of src.page) {
    const seq = startOf(end);
    const start = seq === null ? undefined : src.known.get(seq);
    if (start) out.push({ start, end, kind: end.kind });
    if (end.kind !== "session_ended") continue;
    for (const open of src.openAtEnd ?? []) {
      const kind = END_OF[open.kind];
      if (kind && open.seq < end.seq) out.push({ start: open, end, kind });
    }
  }
  return out;
}

interface Base {
  sessionId: string;
  start: TraceRecord;
  /** The span's end record, or the session_ended that ended it. */
  end: TraceRecord;
  resource: Resource;
}

/** The observation records an activation_started names (what woke it). */
export function observationsOf(start: TraceRecord): number[] {
  return payloadOf(start, "activation_started")?.observations ?? [];
}

function invokeAgent(b: Base, common: Attributes, observed: SpanSource["observed"]): JournalSpan {
  const p = payloadOf(b.end, "activation_ended");
  const status = p?.status ?? "session_ended";
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
    "brain.activation.cause": payloadOf(b.start, "activation_started")?.cause ?? "",
    "brain.activation.status": status,
  };
  const error = status === "failed" ? p?.error?.code : status === "completed" ? undefined : status;
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
  const p = payloadOf(b.end, "model_call_ended");
  const start = payloadOf(b.start, "model_call_started");
  const activation = start?.activation ?? b.start.seq;
  const attributes: Attributes = { ...common, "gen_ai.operation.name": "chat", "brain.model_call.origin": "agentloop" };
  if (p?.model) {
    attributes["gen_ai.response.model"] = p.model;
    attributes["gen_ai.request.model"] ??= p.model;
  }
  if (p?.usage) {
    attributes["gen_ai.usage.input_tokens"] = p.usage.inputTokens;
    attributes["gen_ai.usage.output_tokens"] = p.usage.outputTokens;
  }
  if (p?.response?.stopReason) attributes["gen_ai.response.finish_reasons"] = [p.response.stopReason];
  // A tool's own model call belongs to the tool: it is a child of the tool call's span.
  let parent = spanIdOf(b.sessionId, activation);
  if (start?.origin.type === "tool") {
    parent = spanIdOf(b.sessionId, start.origin.sequence);
    attributes["brain.model_call.origin"] = "tool";
  }
  const model = requested ?? p?.model;
  return span(b, {
    name: model ? `chat ${model}` : "chat",
    kind: SpanKind.CLIENT,
    traceId: traceIdOf(b.sessionId, activation),
    parent,
    attributes,
    // Ended by the session's end: its outcome is unknown.
    error: p ? outcomeError(p.outcome) : "session_ended",
  });
}

function executeTool(b: Base, common: Attributes, known: ReadonlyMap<number, TraceRecord>): JournalSpan {
  const s = payloadOf(b.start, "tool_call_started");
  // A call an MCP client started belongs to no activation: it is the root of a trace of its own,
  // named by its own sequence (the unit its tools' model calls are charged to, too).
  const own = s?.activation == null;
  const activation = s?.activation ?? b.start.seq;
  const tool = s?.tool ?? "";
  // Ended by the session's end: cancelled, as the session's end cancels its open calls.
  const outcome = payloadOf(b.end, "tool_call_ended")?.outcome ?? null;
  const attributes: Attributes = {
    ...common,
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": tool,
    "gen_ai.tool.type": "function",
    "brain.tool_call.status": outcome?.status ?? "cancelled",
  };
  if (s) attributes["gen_ai.tool.call.id"] = s.callId;
  const events = [...known.values()]
    .filter((r) => r.seq > b.start.seq && r.seq < b.end.seq && callOf(r) === b.start.seq && !NOT_EVENTS.has(r.kind))
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
    error: outcome ? outcomeError(outcome) : "session_ended",
    events,
  });
}

/** What a span event says of its record: its sequence and status, never the data (content). */
function eventAttributes(r: TraceRecord): Attributes {
  const a: Attributes = { "brain.sequence": r.seq };
  const status = (payloadOf(r, "tool_result") ?? payloadOf(r, "environment_operation"))?.outcome.status;
  if (status) a["brain.outcome.status"] = status;
  const code = payloadOf(r, "emission_rejected")?.code;
  if (code) a["brain.code"] = code;
  return a;
}

function outcomeError(outcome: RecordedOutcome): string | undefined {
  if (outcome.status === "ok") return undefined;
  return outcome.error?.code ?? outcome.status;
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
