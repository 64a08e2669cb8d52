import {
  type BrainRecordKind,
  type BrainRecordOf,
  brainRecord,
  type RecordedOutcome,
  type RecordPayload,
  type StoredRecord,
} from "@aexhq/brain-contracts";
import type { ModelMessage } from "@aexhq/brain-core/models";

/**
 * A session's Agentloop state is a fold of its journal, nothing more: a server that restarts (or
 * takes a session over) rebuilds exactly what the previous owner knew by replaying the records.
 */

interface Published {
  outcome: RecordedOutcome;
  content?: string;
}

export interface CallState {
  seq: number;
  tool: string;
  /** The model's id for this call, echoed in the tool message. */
  callId: string;
  activation: number;
  state: "open" | "returned" | "ended";
  results: Published[];
  final: RecordedOutcome | null;
  /** Whether the model has been shown this call's synchronous phase. */
  fed: boolean;
  /** Epoch ms, or null for unlimited. */
  deadline: number | null;
}

export interface ActivationState {
  seq: number;
  message: number | null;
  /** A cancel_requested arrived while this activation ran. */
  cancelled: boolean;
  /** The turn's caller deadline (epoch ms) from its user message, or null. */
  deadline: number | null;
  /** Calls of the current round: the model continues once each has returned or ended. */
  round: number[];
}

export interface Observation {
  seq: number;
  call: number;
  /** The call's tool, kept here: the call itself may be gone from `calls` by the time it is read. */
  tool: string;
  text: string;
}

export interface LoopState {
  lastSeq: number;
  ended: boolean;
  /** The session's caller deadline (epoch ms) from session_created, or null. */
  sessionDeadline: number | null;
  /** The system prompt of its model calls (session_created's), if any. */
  system: string | null;
  /**
   * A fork with a model of its own: the Agentloop model calls it copied from its source, which its
   * model did not answer (the scripted provider's steps count from after them).
   */
  inheritedModelCalls: number;
  /** Messages waiting for their activation, each with its turn's caller deadline. */
  messages: { seq: number; text: string; deadline: number | null }[];
  activation: ActivationState | null;
  /**
   * Calls the loop still needs: those not ended, and ended ones the current turn's model has yet
   * to be shown. A call that has ended and been shown (its tool message is in `conversation`), or
   * that ended in a turn that is over, is dropped: a long session holds its conversation, not
   * every call it ever made.
   */
  calls: Map<number, CallState>;
  /** Calls not yet ended. */
  open: Set<number>;
  conversation: ModelMessage[];
  modelCalls: number;
  /** Model calls charged to the current activation: the Agentloop's and its tools'. */
  activationModelCalls: number;
  /** A model_call_started with no model_call_ended: set while a provider call is in flight. */
  openModelCall: number | null;
  /** Later results of calls the model has already seen: they wake a new activation. */
  backlog: Observation[];
}

export function initialState(): LoopState {
  return {
    lastSeq: 0,
    ended: false,
    sessionDeadline: null,
    system: null,
    inheritedModelCalls: 0,
    messages: [],
    activation: null,
    calls: new Map(),
    open: new Set(),
    conversation: [],
    modelCalls: 0,
    activationModelCalls: 0,
    openModelCall: null,
    backlog: [],
  };
}

export type JournalRecord = StoredRecord;

/**
 * One result as the model reads it. `content` represents a result but never replaces its status:
 * a tool's text for an error (or for output that failed validation) would otherwise read as
 * success. So the model always gets the status line (an error's code and message, an
 * interruption's cause) and then the content; without content, the whole outcome.
 */
export function renderPublished(r: Published): string {
  if (r.content === undefined) return JSON.stringify(r.outcome);
  return `${JSON.stringify(statusOf(r.outcome))}\n${r.content}`;
}

/** The outcome without its value (the content stands for it) and without error details. */
function statusOf(outcome: Published["outcome"]): Record<string, unknown> {
  const head: Record<string, unknown> = { status: outcome.status };
  if (outcome.error) head.error = { code: outcome.error.code, message: outcome.error.message };
  if (outcome.cause !== undefined) head.cause = outcome.cause;
  if (outcome.message !== undefined) head.message = outcome.message;
  return head;
}

/** What the model is told about a call when its synchronous phase is over. */
export function renderCall(call: CallState): string {
  if (call.results.length > 0) return call.results.map(renderPublished).join("\n");
  if (call.final) return JSON.stringify(call.final);
  return "The tool returned without a result and continues in the background; later results will follow.";
}

function feedRound(state: LoopState): void {
  const a = state.activation;
  if (!a) return;
  for (const seq of a.round) {
    const call = state.calls.get(seq);
    if (!call || call.fed) continue;
    call.fed = true;
    state.conversation.push({ role: "tool", toolCallId: call.callId, name: call.tool, content: renderCall(call) });
    if (call.state === "ended") state.calls.delete(seq);
  }
  a.round = [];
}

/**
 * The model's last tool calls get their answers in the conversation however the turn ended
 * (cancelled, failed, or closed by a fork): providers refuse a conversation with a tool call left
 * unanswered. A call still running is answered so, and its later end is no news to the model.
 */
function closeRound(state: LoopState): void {
  const a = state.activation;
  if (!a) return;
  for (const seq of a.round) {
    const call = state.calls.get(seq);
    if (!call || call.fed) continue;
    const content = call.state === "ended" ? renderCall(call) : "The turn ended before this call finished.";
    state.conversation.push({ role: "tool", toolCallId: call.callId, name: call.tool, content });
  }
  a.round = [];
}

type Fold<K extends BrainRecordKind> = (state: LoopState, seq: number, p: RecordPayload<K>) => void;

/** What each record kind the Agentloop reads does to its state; any other kind only advances lastSeq. */
const FOLDS: { [K in BrainRecordKind]?: Fold<K> } = {
  session_created: (state, _seq, p) => {
    state.sessionDeadline = p.deadline ?? null;
    state.system = p.system ?? null;
    state.inheritedModelCalls = p.forkedFrom?.modelCalls ?? 0;
  },
  user_message: (state, seq, p) => {
    state.messages.push({ seq, text: p.text, deadline: p.deadline ?? null });
  },
  activation_started: foldActivationStarted,
  model_call_started: (state, seq, p) => {
    if (state.activation && p.activation === state.activation.seq) state.activationModelCalls++;
    // A tool's own model call is not part of the conversation, and never blocks the loop.
    if (p.origin.type === "tool") return;
    if (state.activation) feedRound(state);
    state.modelCalls++;
    state.openModelCall = seq;
  },
  model_call_ended: (state, _seq, p) => {
    if (p.origin?.type === "tool" || p.call !== state.openModelCall) return;
    state.openModelCall = null;
    if (!p.response) return;
    const msg: ModelMessage = { role: "assistant", content: p.response.text };
    if (p.response.toolCalls.length > 0) msg.toolCalls = p.response.toolCalls;
    if (p.response.thinking && p.response.thinking.length > 0) msg.thinking = p.response.thinking;
    state.conversation.push(msg);
  },
  tool_call_started: (state, seq, p) => {
    // An MCP client's call (Brain as an MCP server) belongs to no turn: the model never sees it.
    if (p.origin?.type === "mcp" || p.activation === null) return;
    const call: CallState = {
      seq,
      tool: p.tool,
      callId: p.callId,
      activation: p.activation,
      state: "open",
      results: [],
      final: null,
      fed: false,
      deadline: p.deadline,
    };
    state.calls.set(seq, call);
    state.open.add(seq);
    if (state.activation?.seq === p.activation) state.activation.round.push(seq);
  },
  tool_result: (state, seq, p) => {
    const call = state.calls.get(p.call);
    if (!call) return;
    const r: Published = { outcome: p.outcome };
    if (p.content !== undefined) r.content = p.content;
    call.results.push(r);
    if (call.fed) state.backlog.push({ seq, call: call.seq, tool: call.tool, text: renderPublished(r) });
  },
  tool_returned: (state, _seq, p) => {
    const call = state.calls.get(p.call);
    if (call && call.state === "open") call.state = "returned";
  },
  tool_call_ended: foldCallEnded,
  activation_ended: (state) => {
    closeRound(state);
    // Calls of this turn that ended without being shown (a cancelled or failed turn) never will be.
    const a = state.activation;
    if (a)
      for (const [seq, call] of state.calls)
        if (call.activation === a.seq && call.state === "ended") state.calls.delete(seq);
    state.activation = null;
  },
  cancel_requested: (state) => {
    // Cancels the turn that is running, if any; a cancel with nothing running is a no-op.
    if (state.activation) state.activation.cancelled = true;
  },
  session_ended: (state) => {
    state.ended = true;
  },
};

/** The kinds whose payload `fold` reads; any other record only advances lastSeq. */
export const FOLDED_KINDS: ReadonlySet<string> = new Set(Object.keys(FOLDS));

export function fold(state: LoopState, record: JournalRecord): void {
  if (record.seq <= state.lastSeq) return;
  state.lastSeq = record.seq;
  const r = brainRecord(record);
  if (r) foldKind(state, r);
}

function foldKind<K extends BrainRecordKind>(state: LoopState, r: BrainRecordOf<K>): void {
  FOLDS[r.kind]?.(state, r.seq, r.payload);
}

function foldActivationStarted(state: LoopState, seq: number, p: RecordPayload<"activation_started">): void {
  const message = p.message ?? null;
  const m = message === null ? undefined : state.messages.find((x) => x.seq === message);
  state.activation = { seq, message, round: [], cancelled: false, deadline: m?.deadline ?? null };
  state.activationModelCalls = 0;
  if (message !== null) {
    state.messages = state.messages.filter((x) => x.seq !== message);
    state.conversation.push({ role: "user", content: m?.text ?? "" });
  }
  const seen = new Set(p.observations ?? []);
  if (seen.size === 0) return;
  const taken = state.backlog.filter((o) => seen.has(o.seq));
  state.backlog = state.backlog.filter((o) => !seen.has(o.seq));
  const lines = taken.map((o) => `[${o.tool} #${o.call}] ${o.text}`);
  state.conversation.push({ role: "user", content: `Later tool results:\n${lines.join("\n")}` });
}

function foldCallEnded(state: LoopState, seq: number, p: RecordPayload<"tool_call_ended">): void {
  const call = state.calls.get(p.call);
  if (!call) return;
  call.state = "ended";
  call.final = p.outcome;
  state.open.delete(call.seq);
  // Interruptions Brain recorded (no tool_result precedes them) are news to the model.
  const s = call.final.status;
  if (call.fed && (s === "timeout" || s === "cancelled" || s === "unknown")) {
    state.backlog.push({ seq, call: call.seq, tool: call.tool, text: JSON.stringify(call.final) });
  }
  // Shown to the model, or of a turn that is over (it never will be): no longer needed.
  if (call.fed || state.activation?.seq !== call.activation) state.calls.delete(call.seq);
}

/** Whether every call of the current round has finished its synchronous phase. */
export function roundSettled(state: LoopState): boolean {
  const a = state.activation;
  if (!a) return false;
  return a.round.every((seq) => state.calls.get(seq)?.state !== "open");
}
