// The Agentloop's state is a fold of its journal: what a server (or the one taking a session
// over) knows is exactly what replaying the records gives. No database: the records are written
// here as the journal holds them.

import { checkRecord, RECORD_KINDS } from "@aexhq/brain-contracts";
import { describe, expect, it } from "vitest";
import {
  FOLDED_KINDS,
  fold as foldRecord,
  initialState,
  type JournalRecord,
  type LoopState,
  roundSettled,
} from "../../src/loop/state.js";

/** Folds a record written as the journal holds it: each must match its kind's schema. */
function fold(state: LoopState, record: JournalRecord): void {
  expect(checkRecord(record), `${record.kind} #${record.seq}`).toEqual([]);
  foldRecord(state, record);
}

function replay(records: [kind: string, payload: unknown][]): LoopState {
  const state = initialState();
  records.forEach(([kind, payload], i) => {
    fold(state, { seq: i + 1, kind, payload });
  });
  return state;
}

const call = (activation: number, tool: string, callId: string, extra: object = {}): [string, unknown] => [
  "tool_call_started",
  { activation, tool, callId, input: {}, deadline: null, ...extra },
];

describe("the journal fold", () => {
  it("starts a turn from its user message, with the turn's and the session's deadlines", () => {
    const state = replay([
      ["session_created", { model: { provider: "scripted" }, tools: [], hostId: null, deadline: 5_000 }],
      ["user_message", { text: "hello", deadline: 4_000 }],
      ["activation_started", { cause: "user_message", message: 2 }],
    ]);
    expect(state.sessionDeadline).toBe(5_000);
    expect(state.messages).toEqual([]);
    expect(state.activation).toMatchObject({ seq: 3, message: 2, deadline: 4_000, cancelled: false });
    expect(state.conversation).toEqual([{ role: "user", content: "hello" }]);
  });

  it("ignores a record it has already folded (replay after a takeover is idempotent)", () => {
    const state = replay([["user_message", { text: "once" }]]);
    fold(state, { seq: 1, kind: "user_message", payload: { text: "once" } });
    expect(state.messages).toHaveLength(1);
    expect(state.lastSeq).toBe(1);
  });

  it("feeds a round's results to the model when the next model call starts, status first", () => {
    const records: [string, unknown][] = [
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      ["model_call_started", { origin: { type: "agentloop" }, activation: 2 }],
      [
        "model_call_ended",
        {
          call: 3,
          outcome: { status: "ok" },
          response: { text: "calling", toolCalls: [{ id: "c1", name: "lookup", input: {} }] },
        },
      ],
      call(2, "lookup", "c1"),
      ["tool_result", { call: 5, outcome: { status: "error", error: { code: "boom", message: "bad" } }, content: "x" }],
      ["tool_call_ended", { call: 5, outcome: { status: "error" } }],
    ];
    const state = replay(records);
    expect(state.open.size).toBe(0);
    expect(roundSettled(state)).toBe(true);
    fold(state, { seq: 8, kind: "model_call_started", payload: { origin: { type: "agentloop" }, activation: 2 } });
    const tool = state.conversation.at(-1);
    expect(tool).toMatchObject({ role: "tool", toolCallId: "c1", name: "lookup" });
    // The content never replaces the status: an error reads as an error.
    expect(tool?.content).toBe('{"status":"error","error":{"code":"boom","message":"bad"}}\nx');
    expect(state.modelCalls).toBe(2);
    expect(state.activationModelCalls).toBe(2);
  });

  it("keeps a round open until every call has returned or ended", () => {
    const state = replay([
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      call(2, "a", "c1"),
      call(2, "b", "c2"),
      ["tool_returned", { call: 3 }],
    ]);
    expect(roundSettled(state)).toBe(false);
    fold(state, { seq: 6, kind: "tool_returned", payload: { call: 4 } });
    expect(roundSettled(state)).toBe(true);
    expect([...state.open]).toEqual([3, 4]);
  });

  it("queues later results of a call the model has seen, and the next activation takes them", () => {
    const state = replay([
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      call(2, "watch", "c1"),
      ["tool_returned", { call: 3 }],
      ["model_call_started", { origin: { type: "agentloop" }, activation: 2 }],
      ["model_call_ended", { call: 5, outcome: { status: "ok" }, response: { text: "waiting", toolCalls: [] } }],
      ["activation_ended", { activation: 2, message: 1, status: "completed", text: "" }],
      ["tool_result", { call: 3, outcome: { status: "ok", value: 1 } }],
      ["tool_call_ended", { call: 3, outcome: { status: "timeout" } }],
    ]);
    expect(state.backlog.map((o) => o.seq)).toEqual([8, 9]);
    fold(state, { seq: 10, kind: "activation_started", payload: { cause: "observations", observations: [8, 9] } });
    expect(state.backlog).toEqual([]);
    expect(state.activation?.message).toBeNull();
    expect(state.conversation.at(-1)).toEqual({
      role: "user",
      content: 'Later tool results:\n[watch #3] {"status":"ok","value":1}\n[watch #3] {"status":"timeout"}',
    });
  });

  it("forgets a call once it has ended and the model has been shown it, in either order", () => {
    const state = replay([
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      call(2, "quick", "c1"),
      call(2, "watch", "c2"),
      ["tool_call_ended", { call: 3, outcome: { status: "ok" } }],
      ["tool_returned", { call: 4 }],
    ]);
    // Ended but not yet shown, and returned but still running: both still needed.
    expect([...state.calls.keys()]).toEqual([3, 4]);
    fold(state, { seq: 7, kind: "model_call_started", payload: { origin: { type: "agentloop" }, activation: 2 } });
    // Shown: the ended one goes (its tool message is in the conversation), the running one stays.
    expect([...state.calls.keys()]).toEqual([4]);
    expect(state.conversation.filter((m) => m.role === "tool")).toHaveLength(2);
    fold(state, {
      seq: 8,
      kind: "model_call_ended",
      payload: { call: 7, outcome: { status: "ok" }, response: { text: "later", toolCalls: [] } },
    });
    fold(state, {
      seq: 9,
      kind: "activation_ended",
      payload: { activation: 2, message: 1, status: "completed", text: "" },
    });
    fold(state, { seq: 10, kind: "tool_call_ended", payload: { call: 4, outcome: { status: "cancelled" } } });
    // Shown before it ended: it goes when it ends, and its interruption waits, named, in the backlog.
    expect(state.calls.size).toBe(0);
    expect(state.open.size).toBe(0);
    expect(state.backlog).toEqual([{ seq: 10, call: 4, tool: "watch", text: '{"status":"cancelled"}' }]);
  });

  it("forgets the calls of a turn that ended without showing them, then or when they end", () => {
    const state = replay([
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      call(2, "quick", "c1"),
      call(2, "watch", "c2"),
      ["tool_call_ended", { call: 3, outcome: { status: "cancelled" } }],
      ["activation_ended", { activation: 2, message: 1, status: "completed", text: "" }],
    ]);
    // The ended one went with its turn; the one still running stays until it ends.
    expect([...state.calls.keys()]).toEqual([4]);
    fold(state, { seq: 7, kind: "tool_call_ended", payload: { call: 4, outcome: { status: "cancelled" } } });
    expect(state.calls.size).toBe(0);
    expect(state.backlog).toEqual([]);
  });

  it("answers every tool call of a turn that ended before the model saw the results", () => {
    const state = replay([
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      ["model_call_started", { activation: 2, origin: { type: "agentloop" } }],
      [
        "model_call_ended",
        {
          call: 3,
          outcome: { status: "ok" },
          response: {
            text: "",
            toolCalls: [
              { id: "c1", name: "quick", input: {} },
              { id: "c2", name: "watch", input: {} },
            ],
          },
        },
      ],
      call(2, "quick", "c1"),
      call(2, "watch", "c2"),
      ["tool_call_ended", { call: 5, outcome: { status: "cancelled" } }],
      ["activation_ended", { activation: 2, message: 1, status: "cancelled", text: "" }],
    ]);
    // Providers refuse a tool call left without its answer: both are answered, the ended one with
    // its outcome, the running one as unfinished; the running one's end is no news later.
    expect(state.conversation.slice(2)).toEqual([
      { role: "tool", toolCallId: "c1", name: "quick", content: JSON.stringify({ status: "cancelled" }) },
      { role: "tool", toolCallId: "c2", name: "watch", content: "The turn ended before this call finished." },
    ]);
    fold(state, { seq: 9, kind: "tool_call_ended", payload: { call: 6, outcome: { status: "cancelled" } } });
    expect(state.backlog).toEqual([]);
  });

  it("does not count a tool's own model call as the Agentloop's, but charges it to the activation", () => {
    const state = replay([
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      ["model_call_started", { activation: 2, origin: { type: "tool", sessionId: "s", sequence: 3 } }],
    ]);
    expect(state.openModelCall).toBeNull();
    expect(state.modelCalls).toBe(0);
    expect(state.activationModelCalls).toBe(1);
  });

  it("marks the running turn cancelled, and a cancel with nothing running changes nothing", () => {
    const idle = replay([["cancel_requested", { by: "api" }]]);
    expect(idle.activation).toBeNull();
    const running = replay([
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      ["cancel_requested", { by: "api" }],
    ]);
    expect(running.activation?.cancelled).toBe(true);
  });

  it("records each call's deadline, and ends with session_ended", () => {
    const state = replay([
      ["user_message", { text: "go" }],
      ["activation_started", { cause: "user_message", message: 1 }],
      call(2, "slow", "c1", { deadline: 9_000 }),
      call(2, "free", "c2"),
      ["session_ended", { reason: "done" }],
    ]);
    expect(state.calls.get(3)?.deadline).toBe(9_000);
    expect(state.calls.get(4)?.deadline).toBeNull();
    expect(state.ended).toBe(true);
  });
});

describe("FOLDED_KINDS", () => {
  it("names kinds of Brain's own, so an Agentloop may drop other records' payloads", () => {
    expect(FOLDED_KINDS.size).toBeGreaterThan(0);
    for (const kind of FOLDED_KINDS) expect(RECORD_KINDS).toContain(kind);
    // The kinds it leaves out are only counted: their payloads never reach the state.
    expect(RECORD_KINDS.filter((k) => !FOLDED_KINDS.has(k)).sort()).toEqual([
      "approval_checked",
      "approval_decided",
      "assistant_message",
      "emission_rejected",
      "environment_operation",
    ]);
  });

  it("an unfolded record advances the sequence and nothing else, whatever its payload", () => {
    const a = initialState();
    const b = initialState();
    fold(a, { seq: 1, kind: "progress", payload: { text: "a", call: 3 } });
    fold(b, { seq: 1, kind: "progress", payload: null });
    expect(a).toEqual(b);
    expect(a.lastSeq).toBe(1);
  });
});
