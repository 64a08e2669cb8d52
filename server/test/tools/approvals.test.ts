// Approval gates: a call of a tool declared with `approval: "always"` is journaled with its input's
// hash and waits, undispatched, for a person; approved it runs once (with edited input when given,
// journaled beside the original), denied it never reaches its host and ends `denied` for the
// model; a decision on a call no longer waiting is refused; the waiting calls show in SQL.
import { type BrainError, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { callsThenDone, journalOf, serverAndClient, until } from "../../../testkit/tool-harness.js";

const { server, client: brain } = serverAndClient();

function transferTool(runs: unknown[]) {
  return tool({
    name: "transfer",
    description: "Sends money.",
    input: z.object({ to: z.string(), amount: z.number().positive() }),
    approval: "always",
    run: async (input, ctx) => {
      runs.push(input);
      return ctx.finish({ sent: input.amount });
    },
  });
}

async function waitingCall(sessionId: string) {
  return until("a call waiting for approval", async () => {
    const [row] = await server.db.sql<{ call: number; input_hash: string; input: unknown }[]>`
      SELECT call::int AS call, input_hash, input FROM brain.approvals WHERE session_id = ${sessionId}`;
    return row;
  });
}

const rejection = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) => e as BrainError,
  );

describe("approval gates", () => {
  it("a call waits undispatched until approved, then runs once with the model's input", async () => {
    const runs: unknown[] = [];
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "alice", amount: 10 } }),
      tools: [transferTool(runs)()],
    });
    const turn = session.send("pay alice");
    const waiting = await waitingCall(session.id);
    expect(waiting.input).toEqual({ to: "alice", amount: 10 });
    expect(waiting.input_hash).toMatch(/^[0-9a-f]{64}$/);
    const listed = await session.approvals();
    expect(listed).toEqual([
      expect.objectContaining({ call: waiting.call, tool: "transfer", input: { to: "alice", amount: 10 } }),
    ]);
    const [state] = await server.db.sql<{ state: string }[]>`
      SELECT state FROM brain.calls WHERE session_id = ${session.id} AND seq = ${waiting.call}`;
    expect(state!.state).toBe("awaiting");
    expect(runs).toEqual([]);

    await session.approve(waiting.call);
    await expect(turn).resolves.toBe("done");
    expect(runs).toEqual([{ to: "alice", amount: 10 }]);
    const journal = await journalOf(server.db.sql, session.id);
    const started = journal.find((r) => r.kind === "tool_call_started")!;
    expect(started.payload.approval).toEqual({ inputHash: waiting.input_hash });
    expect(journal.find((r) => r.kind === "approval_decided")!.payload).toEqual({
      call: waiting.call,
      decision: "approved",
      by: "operator",
    });
    // Decided already: a second decision is refused, and changes nothing.
    expect(await rejection(session.approve(waiting.call))).toMatchObject({ code: "call_not_waiting" });
    expect(await rejection(session.deny(waiting.call))).toMatchObject({ code: "call_not_waiting" });
    expect(runs).toHaveLength(1);
  });

  it("an approval with edited input runs the edited input, and the journal keeps both", async () => {
    const runs: unknown[] = [];
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "mallory", amount: 5000 } }),
      tools: [transferTool(runs)()],
    });
    const turn = session.send("pay");
    const { call } = await waitingCall(session.id);
    // Edited input that does not fit the tool's schema is refused, and the call still waits.
    expect(await rejection(session.approve(call, { input: { to: "alice", amount: -1 } }))).toMatchObject({
      code: "invalid_request",
    });
    expect(await session.approvals()).toHaveLength(1);
    await session.approve(call, { input: { to: "alice", amount: 50 } });
    await expect(turn).resolves.toBe("done");
    expect(runs).toEqual([{ to: "alice", amount: 50 }]);
    const journal = await journalOf(server.db.sql, session.id);
    expect(journal.find((r) => r.kind === "tool_call_started")!.payload.input).toEqual({ to: "mallory", amount: 5000 });
    expect(journal.find((r) => r.kind === "approval_decided")!.payload).toMatchObject({
      decision: "approved",
      input: { to: "alice", amount: 50 },
    });
  });

  it("a denied call never reaches its host and ends denied, with the reason, for the model", async () => {
    const runs: unknown[] = [];
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "mallory", amount: 5000 } }),
      tools: [transferTool(runs)()],
    });
    const turn = session.send("pay");
    const { call } = await waitingCall(session.id);
    await session.deny(call, { reason: "not a known payee" });
    await expect(turn).resolves.toBe("done");
    expect(runs).toEqual([]);
    const journal = await journalOf(server.db.sql, session.id);
    const ended = journal.find((r) => r.kind === "tool_call_ended")!;
    expect(ended.payload).toEqual({
      call,
      outcome: { status: "error", error: { code: "denied", message: "Denied: not a known payee" } },
    });
    expect(journal.map((r) => r.kind).indexOf("approval_decided")).toBeLessThan(journal.indexOf(ended));
    expect(await rejection(session.approve(call))).toMatchObject({ code: "call_not_waiting" });
  });

  it("a waiting call still obeys cancellation, and its session's end", async () => {
    const runs: unknown[] = [];
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "bob", amount: 1 } }),
      tools: [transferTool(runs)()],
    });
    const turn = session.send("pay");
    const { call } = await waitingCall(session.id);
    expect(await session.cancelCall(call)).toBe(true);
    await expect(turn).resolves.toBe("done");
    expect(await rejection(session.approve(call))).toMatchObject({ code: "call_not_waiting" });
    expect(await session.approvals()).toEqual([]);
    expect(runs).toEqual([]);
  });

  it("a waiting call's deadline keeps running: it ends timeout, and an approval after that is refused", async () => {
    const runs: unknown[] = [];
    const slowToDecide = tool({
      name: "transfer",
      description: "Sends money.",
      input: z.object({ to: z.string(), amount: z.number().positive() }),
      approval: "always",
      timeoutMs: 300,
      run: async (input, ctx) => {
        runs.push(input);
        return ctx.finish({ sent: input.amount });
      },
    });
    const session = await brain.sessions.create({
      model: callsThenDone({ name: "transfer", input: { to: "carol", amount: 3 } }),
      tools: [slowToDecide()],
    });
    const turn = session.send("pay");
    const { call } = await waitingCall(session.id);
    await expect(turn).resolves.toBe("done");
    const ended = (await journalOf(server.db.sql, session.id)).find((r) => r.kind === "tool_call_ended")!;
    expect(ended.payload).toMatchObject({ call, outcome: { status: "timeout" } });
    expect(await rejection(session.approve(call))).toMatchObject({ code: "call_not_waiting" });
    expect(runs).toEqual([]);
  });

  it("watchApprovals yields the calls waiting now, then each new one, and not decided ones", async () => {
    const runs: unknown[] = [];
    const session = await brain.sessions.create({
      model: {
        provider: "scripted",
        script: [
          { toolCalls: [{ name: "transfer", input: { to: "a", amount: 1 } }] },
          { toolCalls: [{ name: "transfer", input: { to: "b", amount: 2 } }] },
          { text: "done" },
        ],
      },
      tools: [transferTool(runs)()],
    });
    const turn = session.send("pay twice");
    const first = await waitingCall(session.id);
    const abort = new AbortController();
    const watched = session.watchApprovals({ signal: abort.signal })[Symbol.asyncIterator]();
    // Waiting before the watch began: yielded first.
    const a = await watched.next();
    expect(a.value).toMatchObject({ call: first.call, input: { to: "a", amount: 1 }, inputHash: first.input_hash });
    await session.approve(first.call);
    // The next call is made only after the first's result: yielded as it arrives.
    const b = await watched.next();
    expect(b.value).toMatchObject({ tool: "transfer", input: { to: "b", amount: 2 } });
    await session.deny(b.value!.call);
    await expect(turn).resolves.toBe("done");
    abort.abort();
    expect((await watched.next()).done).toBe(true);
    expect(runs).toEqual([{ to: "a", amount: 1 }]);
  });
});
