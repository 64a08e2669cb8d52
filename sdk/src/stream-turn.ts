import { BrainError, type JournalEvent, LiveDeltaSchema, payloadOf, type RecordedOutcome } from "./contracts.js";
import type { HttpClient } from "./http-client.js";
import { readEvent } from "./parse-event.js";
import { journalLines, judge } from "./turn.js";

/**
 * What `session.stream` yields, in order, for one turn:
 * - `text-delta`: a piece of a model call's text as the provider streams it (live, not journaled;
 *   `call` is the model call's sequence, `offset` where the piece starts in its text);
 * - `text`: a model call's text as journaled, once it has committed (the truth: a reader that missed
 *   deltas, or whose provider does not stream, has it here);
 * - `tool-call` and `tool-result`: a tool call journaled as started, and its outcome;
 * - `finish`: the turn's final text, the last part.
 * A failed or cancelled turn throws the BrainError `send` rejects with.
 */
export type TurnStreamPart =
  | { type: "text-delta"; call: number; offset: number; text: string }
  | { type: "text"; call: number; text: string }
  | { type: "tool-call"; sequence: number; tool: string; callId: string; input: unknown }
  | { type: "tool-result"; call: number; status: RecordedOutcome["status"]; value?: unknown; error?: unknown }
  | { type: "finish"; sequence: number; text: string };

/** The turn of message `messageSeq`, followed through reconnections like `send`'s (turn.ts). */
export async function* streamTurn(
  http: HttpClient,
  sessionPath: string,
  messageSeq: number,
  signal?: AbortSignal,
): AsyncGenerator<TurnStreamPart> {
  const turn = new TurnParts(messageSeq);
  const query = () => ({ after: turn.after, follow: true, live: true });
  for await (const line of journalLines(http, sessionPath, query, signal)) {
    const parts = turn.read(line);
    for (const part of parts) yield part;
    if (parts.at(-1)?.type === "finish") return;
  }
}

/** One turn's parts from the stream's lines; what a reconnection must not repeat, it remembers. */
class TurnParts {
  after: number;
  private activation: number | null = null;
  private readonly calls = new Set<number>();
  private readonly tools = new Set<number>();
  /** Per model call: how far its text has been yielded. */
  private readonly sent = new Map<number, number>();

  constructor(private readonly messageSeq: number) {
    this.after = messageSeq;
  }

  read(line: string): TurnStreamPart[] {
    const json = parseJson(line);
    const delta = LiveDeltaSchema.safeParse(json);
    if (delta.success) return this.delta(delta.data);
    const event = readEvent(line);
    if (event instanceof BrainError) throw event;
    const verdict = judge(event, this.messageSeq);
    if (verdict && "error" in verdict) throw verdict.error;
    this.after = event.sequence;
    if (verdict) return [{ type: "finish", sequence: event.sequence, text: verdict.text }];
    return this.record(event);
  }

  private delta(d: { call: number; offset: number; text: string }): TurnStreamPart[] {
    if (!this.calls.has(d.call)) return [];
    const from = this.sent.get(d.call) ?? 0;
    const end = d.offset + d.text.length;
    if (end <= from) return [];
    this.sent.set(d.call, end);
    const offset = Math.max(d.offset, from);
    return [{ type: "text-delta", call: d.call, offset, text: d.text.slice(offset - d.offset) }];
  }

  private record(event: JournalEvent): TurnStreamPart[] {
    const started = payloadOf(event, "activation_started");
    if (started?.message === this.messageSeq) this.activation = event.sequence;
    if (this.activation === null) return [];
    if (payloadOf(event, "model_call_started")?.activation === this.activation) this.calls.add(event.sequence);
    const ended = payloadOf(event, "model_call_ended");
    if (ended && this.calls.has(ended.call)) {
      this.calls.delete(ended.call);
      return ended.response ? [{ type: "text", call: ended.call, text: ended.response.text }] : [];
    }
    const call = payloadOf(event, "tool_call_started");
    if (call && call.activation === this.activation) {
      this.tools.add(event.sequence);
      return [{ type: "tool-call", sequence: event.sequence, tool: call.tool, callId: call.callId, input: call.input }];
    }
    const result = payloadOf(event, "tool_call_ended");
    if (result && this.tools.delete(result.call))
      return [{ type: "tool-result", call: result.call, ...outcomeOf(result.outcome) }];
    return [];
  }
}

function outcomeOf(outcome: RecordedOutcome) {
  const { status, value, error } = outcome;
  return { status, ...(value === undefined ? {} : { value }), ...(error === undefined ? {} : { error }) };
}

function parseJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
