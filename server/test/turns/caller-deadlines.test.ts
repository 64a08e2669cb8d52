// Caller-owned deadlines: a tool declared without timeoutMs runs unlimited unless someone bounds
// it; a session (at creation) and a turn (its message) bound the calls they make; the earliest
// bound wins; the operator's BRAIN_MAX_TOOL_SECS applies only when set. Real servers, the public
// SDK and the HTTP API; deadlines are read back from the journal and brain.tool_calls.
import { type ToolContext, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { InProcessBrain } from "../../../testkit/brain.js";
import { serversOnDemand } from "../../../testkit/tool-harness.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

const setup = serversOnDemand();

/** A tool that runs until Brain stops it (or the test finishes it); its contexts by sequence. */
function waiter(timeoutMs?: number) {
  const seen = new Map<number, ToolContext>();
  const placed = tool({
    name: "waiter",
    description: "Waits until it is stopped.",
    input: z.object({}),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    run: async (_input, ctx) => {
      seen.set(ctx.sequence, ctx as ToolContext);
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    },
  });
  return { placed: placed(), seen };
}

const callsWaiter = { toolCalls: [{ name: "waiter", input: {} }] };

interface CallRow {
  seq: number;
  status: string;
  outcome: { status: string; cause?: string } | null;
  /** epoch ms */
  started: number;
  deadline: number | null;
  ended: number | null;
}

async function calls(brain: InProcessBrain, sessionId: string): Promise<CallRow[]> {
  return brain.db.sql<CallRow[]>`
    SELECT seq, status, outcome,
           (extract(epoch FROM started_at) * 1000)::float8 AS started,
           (extract(epoch FROM deadline_at) * 1000)::float8 AS deadline,
           (extract(epoch FROM ended_at) * 1000)::float8 AS ended
      FROM tool_calls WHERE session_id = ${sessionId} ORDER BY seq`;
}

async function endedCalls(brain: InProcessBrain, sessionId: string, n: number): Promise<CallRow[]> {
  return until(`${n} ended call(s) of ${sessionId}`, async () => {
    const rows = await calls(brain, sessionId);
    return rows.filter((r) => r.status === "ended").length >= n ? rows : undefined;
  });
}

/** The payload field `deadline` of the session's first record of `kind`. */
async function journaledDeadline(brain: InProcessBrain, sessionId: string, kind: string, nth = 0) {
  const rows = await brain.db.sql<{ deadline: number | null }[]>`
    SELECT (payload->>'deadline')::float8 AS deadline FROM journal
     WHERE session_id = ${sessionId} AND kind = ${kind} ORDER BY seq`;
  return rows[nth]?.deadline ?? null;
}

/** A timeout recorded at its deadline: never before it, and not long after (a loaded machine). */
function expectTimedOutAt(row: CallRow, deadline: number) {
  expect(row.outcome).toEqual({ status: "timeout", cause: "deadline" });
  expect(row.deadline).toBe(deadline);
  expect(row.ended!).toBeGreaterThanOrEqual(deadline);
  expect(row.ended! - deadline).toBeLessThan(5_000);
}

/** A deadline of `ms` from the call's start (computed just before the start committed). */
function expectLimit(row: CallRow, ms: number) {
  const limit = row.deadline! - row.started;
  expect(limit).toBeLessThanOrEqual(ms + 1);
  expect(limit).toBeGreaterThan(ms - 2_000);
}

describe("unlimited execution and the operator's cap", () => {
  it("a tool without timeoutMs has no deadline by default; BRAIN_MAX_TOOL_SECS bounds it only when set", async () => {
    const open = await setup();
    const capped = await setup({ BRAIN_MAX_TOOL_SECS: "1" });
    const free = waiter();
    const bounded = waiter();
    const s1 = await open.client.sessions.create({ model: scripted(callsWaiter), tools: [free.placed] });
    void s1.send("go").catch(() => {});
    await until("the unlimited call to run", async () => free.seen.size === 1);
    const s2 = await capped.client.sessions.create({ model: scripted(callsWaiter), tools: [bounded.placed] });
    void s2.send("go").catch(() => {});

    // The capped call, started after the unlimited one, ends at its one-second cap...
    const [cappedRow] = await endedCalls(capped.brain, s2.id, 1);
    expectLimit(cappedRow!, 1_000);
    expectTimedOutAt(cappedRow!, cappedRow!.deadline!);
    expect([...bounded.seen.values()][0]!.signal.aborted).toBe(true);
    // ...while the unlimited one, on a server with no cap, is still open with no deadline at all.
    const [freeRow] = await calls(open.brain, s1.id);
    expect(freeRow).toMatchObject({ status: "running", deadline: null, outcome: null });
    const ctx = [...free.seen.values()][0]!;
    expect(ctx.deadline).toBeUndefined();
    expect(ctx.signal.aborted).toBe(false);
    const [started] = await open.brain.db.sql<{ payload: { deadline: unknown } }[]>`
      SELECT payload FROM journal WHERE session_id = ${s1.id} AND kind = 'tool_call_started'`;
    expect(started!.payload.deadline).toBeNull();
    await s1.end();
  });
});

describe("caller deadlines", () => {
  let shared: Awaited<ReturnType<typeof setup>>;
  const server = async () => {
    shared ??= await setup();
    return shared;
  };

  it("a session's timeoutMs bounds every call it makes, unlimited tools included", async () => {
    const { brain, client } = await server();
    const w = waiter();
    const before = Date.now();
    const s = await client.sessions.create({
      model: scripted(callsWaiter, { text: "gave up" }),
      tools: [w.placed],
      timeoutMs: 1_000,
    });
    const after = Date.now();
    const deadline = (await journaledDeadline(brain, s.id, "session_created"))!;
    expect(deadline).toBeGreaterThanOrEqual(before + 1_000);
    expect(deadline).toBeLessThanOrEqual(after + 1_000);
    expect(await s.send("go")).toBe("gave up");
    const [row] = await endedCalls(brain, s.id, 1);
    expectTimedOutAt(row!, deadline);
    const ctx = w.seen.get(row!.seq)!;
    expect(ctx.deadline).toBe(deadline);
    expect(ctx.signal.reason).toMatchObject({ details: { status: "timeout" } });
  });

  it("a turn's deadline bounds that turn's calls only, and the earliest bound wins", async () => {
    const { brain, client } = await server();
    // The tool allows a minute, the session an hour: the turn's second is the earliest.
    const w = waiter(60_000);
    const s = await client.sessions.create({
      model: scripted(callsWaiter, { text: "first" }, callsWaiter, { text: "second" }, callsWaiter, { text: "third" }),
      tools: [w.placed],
      timeoutMs: 3_600_000,
    });
    const turnDeadline = Date.now() + 1_000;
    // With an idempotency key the message takes the journal path (not the owner's fast path).
    expect(await s.send("go", { deadline: turnDeadline, idempotencyKey: "turn-1" })).toBe("first");
    expect(await journaledDeadline(brain, s.id, "user_message")).toBe(turnDeadline);
    const [first] = await endedCalls(brain, s.id, 1);
    expectTimedOutAt(first!, turnDeadline);
    expect(w.seen.get(first!.seq)!.deadline).toBe(turnDeadline);

    // The next turn sets none: its call gets the tool's own minute, not the first turn's deadline.
    const next = s.send("again");
    const second = await until("the second call", async () => (await calls(brain, s.id))[1]);
    expectLimit(second, 60_000);
    await (await until("its handler", async () => w.seen.get(second.seq))).finish();
    expect(await next).toBe("second");

    // A relative turn deadline, on the owner's fast path (message, activation and model call in
    // one commit): resolved when the message was accepted, and journaled with it.
    expect(await s.send("third", { timeoutMs: 1_000 })).toBe("third");
    const third = (await endedCalls(brain, s.id, 3))[2]!;
    const thirdDeadline = (await journaledDeadline(brain, s.id, "user_message", 2))!;
    expectTimedOutAt(third, thirdDeadline);
  });

  it("a session's deadline caps a turn's later one; the HTTP API takes both forms", async () => {
    const { brain, client } = await server();
    const w = waiter();
    const sessionDeadline = Date.now() + 1_000;
    const s = await client.sessions.create({
      model: scripted(callsWaiter, { text: "done" }),
      tools: [w.placed],
      deadline: sessionDeadline,
    });
    const post = (body: unknown) =>
      fetch(`${brain.url}/v1/sessions/${s.id}/messages`, {
        method: "POST",
        headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    for (const bad of [{ timeoutMs: 0 }, { deadline: -1 }, { deadline: 1.5 }, { timeoutMs: "1000" }]) {
      const res = await post({ text: "go", ...bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
    const res = await post({ text: "go", timeoutMs: 3_600_000, deadline: Date.now() + 7_200_000, wait: true });
    expect(res.status).toBe(201);
    expect(((await res.json()) as { activation: { text: string } }).activation.text).toBe("done");
    const [row] = await endedCalls(brain, s.id, 1);
    expectTimedOutAt(row!, sessionDeadline);
  });
});
