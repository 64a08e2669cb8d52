import { type JournalEvent, type LiveDelta, payloadOf } from "@aexhq/brain-contracts";
import type { StreamFormat } from "./stream-format.js";

/** The AI SDK's headers for a UI message stream (`x-vercel-ai-ui-message-stream: v1`). */
export const UI_STREAM_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

/** One chunk of the protocol; its `type` names it (start, text-delta, tool-input-available, …). */
type Chunk = { type: string } & Record<string, unknown>;

const sse = (...chunks: Chunk[]) => chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("");

/**
 * One turn, from its user message on, in the AI SDK's UI message stream protocol (what `useChat`
 * reads): `start`, a step per model call with its text (live pieces as they stream, then the rest
 * of the committed text), each tool call's input and output, then `finish` (or `error`, `abort`)
 * and `[DONE]`. Rendered from the journal, so the same turn renders the same from its start on any
 * server, which is how a reload resumes it (`resumeStreamIsReplay`). Only contiguous live text is
 * sent: after a gap, the committed text fills in when its call ends.
 */
export class UiMessageStream implements StreamFormat {
  private activation: number | null = null;
  /** Model calls of the turn: how much of each one's text has been sent, and whether its part is open. */
  private readonly calls = new Map<number, { sent: number; open: boolean }>();
  /** Tool calls of the turn, by the sequence of their tool_call_started: their callId. */
  private readonly tools = new Map<number, string>();

  constructor(
    private readonly sessionId: string,
    private readonly messageSeq: number,
  ) {}

  /** What opens the stream. */
  start(): string {
    return sse({ type: "start", messageId: `brain-${this.sessionId}-${this.messageSeq}` });
  }

  record(event: JournalEvent): { text: string; end?: boolean } {
    const started = payloadOf(event, "activation_started");
    if (started?.message === this.messageSeq) this.activation = event.sequence;
    if (event.kind === "session_ended") return this.closing({ type: "error", errorText: "The session ended." });
    if (this.activation === null) return { text: "" };
    return this.ofTurn(event);
  }

  delta(d: LiveDelta): string {
    const call = this.calls.get(d.call);
    if (!call || d.offset !== call.sent || d.text === "") return "";
    call.sent += d.text.length;
    return sse(...this.open(d.call, call), { type: "text-delta", id: textId(d.call), delta: d.text });
  }

  private ofTurn(event: JournalEvent): { text: string; end?: boolean } {
    if (payloadOf(event, "model_call_started")?.activation === this.activation) {
      this.calls.set(event.sequence, { sent: 0, open: false });
      return { text: sse({ type: "start-step" }) };
    }
    const ended = payloadOf(event, "model_call_ended");
    if (ended && this.calls.has(ended.call)) return { text: this.callEnded(ended.call, ended.response?.text ?? "") };
    const call = payloadOf(event, "tool_call_started");
    if (call && call.activation === this.activation) {
      this.tools.set(event.sequence, call.callId);
      const input = { toolCallId: call.callId, toolName: call.tool, input: call.input ?? null, dynamic: true };
      return { text: sse({ type: "tool-input-available", ...input }) };
    }
    const result = payloadOf(event, "tool_call_ended");
    const callId = result ? this.tools.get(result.call) : undefined;
    if (result && callId !== undefined) {
      const { status, value, error } = result.outcome;
      return {
        text: sse(
          status === "ok"
            ? { type: "tool-output-available", toolCallId: callId, output: value ?? null, dynamic: true }
            : { type: "tool-output-error", toolCallId: callId, errorText: errorText(status, error), dynamic: true },
        ),
      };
    }
    const end = payloadOf(event, "activation_ended");
    if (end && end.activation === this.activation) return this.turnEnded(end);
    return { text: "" };
  }

  /** The rest of the call's committed text, and the end of its step. */
  private callEnded(seq: number, text: string): string {
    const call = this.calls.get(seq)!;
    this.calls.delete(seq);
    const chunks: Chunk[] = [];
    const rest = text.slice(call.sent);
    if (rest !== "") chunks.push(...this.open(seq, call), { type: "text-delta", id: textId(seq), delta: rest });
    if (call.open) chunks.push({ type: "text-end", id: textId(seq) });
    chunks.push({ type: "finish-step" });
    return sse(...chunks);
  }

  private turnEnded(end: NonNullable<ReturnType<typeof payloadOf<"activation_ended">>>) {
    if (end.status === "completed") return this.closing({ type: "finish", finishReason: "stop" });
    if (end.status === "cancelled") return this.closing({ type: "abort", reason: "The turn was cancelled." });
    const error = end.error ? `${end.error.code}: ${end.error.message}` : "The turn failed.";
    return this.closing({ type: "error", errorText: error });
  }

  private closing(last: Chunk): { text: string; end: true } {
    return { text: `${sse(last)}data: [DONE]\n\n`, end: true };
  }

  private open(seq: number, call: { open: boolean }): Chunk[] {
    if (call.open) return [];
    call.open = true;
    return [{ type: "text-start", id: textId(seq) }];
  }
}

function textId(call: number): string {
  return `text-${call}`;
}

function errorText(status: string, error: { code: string; message?: string | undefined } | undefined): string {
  if (!error) return `The call ended ${status}.`;
  return error.message ? `${error.code}: ${error.message}` : error.code;
}
